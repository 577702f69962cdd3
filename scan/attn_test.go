package scan

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// attnScan is a scan of an attention dimension at 4 heads, 2 KV heads,
// head dim 16 (bf16, the default draws).
func attnScan(tgt, dim string, from, to int, sh spec.Shape) spec.ScanSpec {
	sh.Heads, sh.KVHeads, sh.HeadDim = 4, 2, 16
	return spec.ScanSpec{Target: tgt, Dim: dim, From: from, To: to, Shape: sh, Seed: 1}
}

// The attention layout controls (target/drift_attn.go) give their exact
// maps on their dimensions and are never certified; the oracle, the same
// rows whatever the layout, is certified on each dimension.
func TestAttnDimMaps(t *testing.T) {
	tests := []struct {
		name string
		s    spec.ScanSpec
		rule string // "" for a certificate
	}{
		{"prefill neighbour: max_seqlen_q from 10", attnScan("drift-attn-maxseqlen-10", spec.ScanNeighbour, 1, 20, spec.Shape{SeqLen: 8}),
			"neighbour <= 9 -> A, neighbour >= 10 -> B"},
		{"chunked prefill", attnScan("drift-attn-chunked-prefill", spec.ScanChunk, 1, 80, spec.Shape{SeqLen: 80}),
			"chunk <= 79 -> A, chunk >= 80 -> B"},
		{"paged decode", attnScan("drift-attn-paged-decode", spec.ScanPage, 16, 128, spec.Shape{Rows: 2, KV: 100}),
			"page <= 64 -> A, 65 <= page <= 99 -> B, page >= 100 -> A"},
		{"prefix cache hit on a page boundary", attnScan("drift-attn-prefix-block", spec.ScanPrefix, 1, 79, spec.Shape{SeqLen: 80}),
			"prefix % 16 == 0 -> B, otherwise -> A"},
		{"oracle, prefix", attnScan("oracle-attn_prefill", spec.ScanPrefix, 1, 79, spec.Shape{SeqLen: 80}), ""},
		{"oracle, prefill neighbour", attnScan("oracle-attn_prefill", spec.ScanNeighbour, 1, 20, spec.Shape{SeqLen: 8}), ""},
		{"oracle, decode neighbour", attnScan("oracle-attn_decode", spec.ScanNeighbour, 1, 100, spec.Shape{KV: 40}), ""},
		{"oracle, chunk", attnScan("oracle-attn_prefill", spec.ScanChunk, 1, 80, spec.Shape{SeqLen: 80}), ""},
		{"oracle, page", attnScan("oracle-attn_decode", spec.ScanPage, 16, 128, spec.Shape{Rows: 2, KV: 100}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(context.Background(), tt.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.rule == "" {
				if r.Certificate == nil || r.Differing != 0 || r.RowsCompared == 0 {
					t.Fatalf("not certified: map %s, %d of %d differ", r.Map.Rule, r.Differing, r.RowsCompared)
				}
				return
			}
			if r.Certificate != nil {
				t.Fatal("a drift model was certified")
			}
			if r.Map.Rule != tt.rule {
				t.Fatalf("map %q, want %q", r.Map.Rule, tt.rule)
			}
		})
	}
}

// A decode neighbour changes the split count of drift-decode-splits-by-batch
// not at all (it splits by the number of requests): the watched request
// keeps its bits whatever its neighbour's KV length.
func TestAttnNeighbourDecodeSplits(t *testing.T) {
	r, err := Run(context.Background(), attnScan("drift-decode-splits-by-batch", spec.ScanNeighbour, 1, 150, spec.Shape{KV: 130}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Certificate == nil {
		t.Fatalf("not certified: %s", r.Map.Rule)
	}
}

// Specs an attention dimension refuses before anything runs.
func TestAttnDimBadSpecs(t *testing.T) {
	tests := []struct {
		s    spec.ScanSpec
		want string
	}{
		{attnScan("drift-decode-splits-by-batch", spec.ScanPage, 16, 64, spec.Shape{KV: 100}), "reads the batch's layout"},
		{attnScan("oracle-attn_decode", spec.ScanChunk, 1, 8, spec.Shape{KV: 8}), "chunk dimension scans attn_prefill"},
		{attnScan("oracle-attn_prefill", spec.ScanChunk, 1, 9, spec.Shape{SeqLen: 8}), "want to <= seq_len"},
		{attnScan("oracle-attn_prefill", spec.ScanPage, 1, 9, spec.Shape{SeqLen: 8}), "page dimension scans attn_decode"},
		{attnScan("oracle-attn_decode", spec.ScanPrefix, 1, 8, spec.Shape{KV: 8}), "prefix dimension scans attn_prefill"},
		{attnScan("oracle-attn_prefill", spec.ScanPrefix, 1, 8, spec.Shape{SeqLen: 8}), "want to < seq_len"},
		{attnScan("drift-attn-tile48", spec.ScanPrefix, 1, 7, spec.Shape{SeqLen: 8}), "reads the batch's layout"},
		{attnScan("oracle-rmsnorm", spec.ScanNeighbour, 1, 9, spec.Shape{Hidden: 8}), "neighbour dimension scans attention"},
	}
	for _, tt := range tests {
		err := Check(tt.s)
		if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s: %v, want a bad scan saying %q", tt.s.Target, tt.s.Dim, err, tt.want)
		}
	}
}
