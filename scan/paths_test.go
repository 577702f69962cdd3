package scan

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/internal/npy"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// TestPathScan: prefill against decode over KV 1..100. The oracle's two
// forms agree at every length; the tile-48 prefill model agrees with the
// tile-64 decode oracle up to its tile edge (48) and differs at most
// lengths past it (not at all: a second tile of one or two tokens can
// rescale exactly, and bf16 outputs round some differences away).
func TestPathScan(t *testing.T) {
	tests := []struct {
		prefill, decode string
		edge            int // 0: they agree everywhere
	}{
		{"oracle-attn_prefill", "oracle-attn_decode", 0},
		{"drift-attn-tile48", "oracle-attn_decode", 48},
	}
	for _, tt := range tests {
		t.Run(tt.prefill, func(t *testing.T) {
			r, err := Run(context.Background(), PathSpec{Prefill: tt.prefill, Decode: tt.decode, To: 100, Seqs: 2,
				Heads: 4, KVHeads: 2, HeadDim: 16, Dists: []spec.Dist{spec.DistNormal}, Seed: 1}.ScanSpec(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("map %s; differ at %s", MapWords(r.Map), Ranges(r.Differ))
			if tt.edge == 0 {
				if len(r.Differ) != 0 || r.Map.Rule != "every kv -> A" && len(r.Map.Classes) != 1 {
					t.Fatalf("the two paths differ at %v (map %s)", r.Differ, MapWords(r.Map))
				}
				return
			}
			if len(r.Differ) < (100-tt.edge)/2 || r.Differ[0] <= tt.edge {
				t.Fatalf("differ at %s, want most lengths past %d and none up to it", Ranges(r.Differ), tt.edge)
			}
		})
	}
}

func TestRanges(t *testing.T) {
	if got := Ranges([]int{1, 2, 3, 7, 9, 10}); got != "1..3, 7, 9..10" {
		t.Fatalf("Ranges = %q", got)
	}
}

// TestPathScanSavesInputs: SaveInputs writes each draw's tensors as .npy
// and the draw as a case, and the files hold exactly the inputs the case
// generates.
func TestPathScanSavesInputs(t *testing.T) {
	dir := t.TempDir()
	ps := PathSpec{Prefill: "oracle-attn_prefill", Decode: "oracle-attn_decode", To: 12, Seqs: 2, Heads: 4, KVHeads: 2,
		HeadDim: 8, Dists: []spec.Dist{spec.DistNormal, spec.DistBoundary}, Seed: 5}
	if _, err := Run(context.Background(), ps.ScanSpec(), Options{SaveInputs: dir}); err != nil {
		t.Fatal(err)
	}
	for k, dist := range ps.Dists {
		d := filepath.Join(dir, fmt.Sprintf("%s-seed%d", dist, ps.Seed+uint64(k)))
		js, err := os.ReadFile(filepath.Join(d, "case.json"))
		if err != nil {
			t.Fatal(err)
		}
		var c spec.Case
		if err := json.Unmarshal(js, &c); err != nil {
			t.Fatal(err)
		}
		b, err := inputs.Of(c)
		if err != nil {
			t.Fatal(err)
		}
		p := b.Input.(*oracle.PrefillInput)
		for _, tn := range []struct {
			name  string
			heads int
			want  []float32
		}{{"q", p.Heads, p.Q}, {"k", p.KVHeads, p.K}, {"v", p.KVHeads, p.V}} {
			raw, err := os.ReadFile(filepath.Join(d, tn.name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			h := npy.Header([]int{ps.Seqs, ps.To, tn.heads, ps.HeadDim})
			if !bytes.Equal(raw[:len(h)], h) || len(raw) != len(h)+4*len(tn.want) {
				t.Fatalf("%s/%s.npy: %d bytes, want the header of shape [2 12 %d 8] and %d values", d, tn.name, len(raw), tn.heads, len(tn.want))
			}
			for i, v := range tn.want {
				if got := binary.LittleEndian.Uint32(raw[len(h)+4*i:]); got != math.Float32bits(v) {
					t.Fatalf("%s/%s.npy value %d: bits %#x, want %#x", d, tn.name, i, got, math.Float32bits(v))
				}
			}
		}
	}
}
