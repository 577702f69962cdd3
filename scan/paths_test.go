package scan

import (
	"context"
	"testing"

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
			r, err := RunPaths(context.Background(), PathSpec{Prefill: tt.prefill, Decode: tt.decode, To: 100, Seqs: 2,
				Heads: 4, KVHeads: 2, HeadDim: 16, Dists: []spec.Dist{spec.DistNormal}, Seed: 1}, Options{})
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
