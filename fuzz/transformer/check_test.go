package transformer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// TestInvariantPathsAgree: with fixed kernels (the same schedule for every
// call, decode with one split and the prefill's tile) the train and the
// inference path agree bitwise on every log-prob and every op output, over
// fuzzed models and request mixes.
func TestInvariantPathsAgree(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 30
	}
	ctx := context.Background()
	start := time.Now()
	positions, tokens := 0, 0
	for i := range n {
		g := Gen{}
		if i%5 == 4 {
			g.MinSeqLen = 56 // KV lengths past 48
		}
		c := g.Case(uint64(1000 + i))
		c.Relation = spec.RelPathParity
		f, err := Check(ctx, c)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if f != nil {
			t.Fatalf("case %d: invariant kernels gave a %s finding: %s\ncase: %+v", i, f.Kind, f.Message, c)
		}
		st, _ := FromCase(c)
		_, p := positionBase(st.Requests)
		_, k := tokenBase(st.Requests)
		positions += p
		tokens += k
	}
	el := time.Since(start)
	t.Logf("%d invariant cases agree bitwise (%d response positions, %d tokens) in %v: %.1f cases/s",
		n, positions, tokens, el.Round(time.Millisecond), float64(n)/el.Seconds())
}

// TestPlantedDriftFound plants each drift model at a random site of its
// kind and checks that path parity finds it and names that layer and op,
// with the drift map of the model's policy.
func TestPlantedDriftFound(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		model string
		gen   Gen
		rule  string // a piece of the drift map's rule
	}{
		{"rmsnorm_rows_mod32", Gen{}, "rows % 32 == 0"},
		{"rmsnorm_rows_ge256", Gen{MinTokens: 256}, "rows >= 256"},
		{"gemm_splitk_by_m", Gen{}, "rows <= 64"},
		// the tiles agree unless a tile past 48 brings a new running max:
		// the onset is at 48 or later, data-dependent.
		{"attn_tile_48_64", Gen{MinSeqLen: 56}, "kv <= "},
		// 4 and 2 splits may agree on short caches: the class edge is at
		// 64 or 128.
		{"decode_splits_by_batch", Gen{MinSeqLen: 24}, "batch <= "},
	}
	const maxCases = 40
	for ti, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			m, err := LookupDriftModel(tt.model)
			if err != nil {
				t.Fatal(err)
			}
			for i := range maxCases {
				seed := uint64(7000 + 100*ti + i)
				c := tt.gen.Case(seed)
				c.Relation = spec.RelPathParity
				sites := PlantSites(m.Kind, c.Shape.Rows)
				site := sites[newRNG(seed, 99, 0).intn(len(sites))]
				c, err := Plant(c, tt.model, site)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				f, err := Check(ctx, c)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if f == nil {
					continue // the drift hid in this case: try another
				}
				if f.Kind != "mismatch" {
					t.Fatalf("seed %d: kind %q: %s", seed, f.Kind, f.Message)
				}
				if want := "first divergence: " + site.String() + " "; !strings.Contains(f.Message, want) {
					t.Fatalf("seed %d: planted at %s, finding says: %s", seed, site, f.Message)
				}
				if f.DriftMap == nil || !strings.Contains(f.DriftMap.Rule, tt.rule) {
					t.Fatalf("seed %d: drift map %+v, want a rule with %q", seed, f.DriftMap, tt.rule)
				}
				if tt.model == "attn_tile_48_64" {
					for _, cl := range f.DriftMap.Classes {
						if cl.Digest == "differs" && cl.Values[0] <= 48 {
							t.Fatalf("seed %d: tiles 48 and 64 differ at kv %d <= 48: %+v", seed, cl.Values[0], f.DriftMap)
						}
					}
				}
				t.Logf("found at %s after %d case(s), %v for the case with localisation; drift map %s: %s",
					site, i+1, time.Since(start).Round(time.Millisecond), f.DriftMap.Dim, f.DriftMap.Rule)
				return
			}
			t.Fatalf("%s: no finding in %d cases", tt.model, maxCases)
		})
	}
}
