package scan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// gridSpec scans requests 1..18 decoded together at 8 heads (8 x 17 =
// 136 >= 132 SMs from 17 requests), 2 KV heads, head dim 8, one normal
// draw.
func gridSpec(tgt string) spec.ScanSpec {
	return spec.ScanSpec{Target: tgt, Op: spec.OpAttnDecode, From: 1, To: 18, Seed: 1,
		Shape: spec.Shape{Heads: 8, KVHeads: 2, HeadDim: 8}, Dists: []spec.Dist{spec.DistNormal}}
}

// The split-KV control splits by requests x heads against the SMs and only
// from a cache of 256 tokens: the grid over requests x kv maps both,
// exactly; drift-decode-splits-by-batch splits at any length, and a cache
// of 65 tokens (its second split one token: the same bits) does not show
// it; the oracle is uniform everywhere.
func TestScanGrid(t *testing.T) {
	kvs := []int{1, 100, 300}
	tests := []struct {
		target, rule string
	}{
		{"drift-attn-split-kv", "batch >= 17 and kv >= 256 -> B, otherwise -> A"},
		{"drift-decode-splits-by-batch", "batch >= 17 and kv >= 66 -> B, otherwise -> A"},
		{"oracle-attn_decode", "every batch -> A"},
	}
	for _, tt := range tests {
		start := time.Now()
		g, err := ScanGrid(context.Background(), gridSpec(tt.target), kvs, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tt.target, err)
		}
		if g.Rule != tt.rule {
			t.Errorf("%s: grid %q (kv map %s), want %q", tt.target, g.Rule, MapWords(g.KV), tt.rule)
		}
		t.Logf("%s: %s (%d scans, %v)", tt.target, g.Rule, len(g.Scans), time.Since(start))
	}
}

// gridRule states a grid whose requests' rule changes more than once
// range by range.
func TestGridRuleRanges(t *testing.T) {
	m := &spec.DriftMap{Dim: "kv", Values: []int{1, 64, 65, 200, 300},
		Classes: []spec.DriftClass{
			{Label: "A", Digest: "every batch -> A", Values: []int{1, 64}},
			{Label: "B", Digest: "batch <= 8 -> A, batch >= 9 -> B", Values: []int{65, 200}},
			{Label: "C", Digest: "batch <= 16 -> A, batch >= 17 -> B", Values: []int{300}},
		}}
	want := "kv <= 64: every batch -> A; 65 <= kv <= 200: batch <= 8 -> A, batch >= 9 -> B; kv >= 300: batch <= 16 -> A, batch >= 17 -> B"
	if got := gridRule(m, "batch"); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	m.Classes = m.Classes[:2]
	m.Classes[1].Values = []int{65, 200, 300}
	if got, want := gridRule(m, "batch"), "batch >= 9 and kv >= 65 -> B, otherwise -> A"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestScanGridBadSpecs(t *testing.T) {
	s := gridSpec("oracle-attn_decode")
	s.From = 2
	if _, err := ScanGrid(context.Background(), s, []int{1}, Options{}); !errors.Is(err, ErrBadSpec) {
		t.Errorf("from 2: %v, want a bad scan", err)
	}
	s = gridSpec("oracle-attn_decode")
	s.Dim = spec.ScanKV
	if _, err := ScanGrid(context.Background(), s, []int{1}, Options{}); !errors.Is(err, ErrBadSpec) {
		t.Errorf("dim kv: %v, want a bad scan", err)
	}
}

// TestParseKVs: --grid-kv takes ascending KV lengths >= 1; anything else
// is an error naming the list.
func TestParseKVs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"", nil},
		{"1, 64,256", []int{1, 64, 256}},
	} {
		got, err := ParseKVs(tc.in)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("ParseKVs(%q) = %v, %v, want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"64,1", "1,1", "0,4", "a"} {
		if _, err := ParseKVs(in); err == nil || !strings.Contains(err.Error(), "ascending") {
			t.Errorf("ParseKVs(%q) = %v, want an error naming an ascending list", in, err)
		}
	}
}
