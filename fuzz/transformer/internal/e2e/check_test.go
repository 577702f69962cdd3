package e2e

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

// TestPlantedDriftFound plants each drift model at random sites of its
// kind (plants sites per model, each in fresh cases until one shows it) and
// checks that path parity finds it, names that layer and op, and maps the
// model's policy.
func TestPlantedDriftFound(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		model string
		dim   string
		rule  string // a piece of the drift map's rule; empty: see below
	}{
		{"rmsnorm_rows_mod32", "rows", "rows % 32 == 0 -> B, otherwise -> A"},
		{"rmsnorm_rows_ge256", "rows", "rows <= 255 -> A, rows >= 256 -> B"},
		{"gemm_splitk_by_m", "rows", "rows <= 64 -> A, 65 <= rows <= 256 -> B, rows >= 257 -> C"},
		// the tiles agree unless a tile past 48 brings a new running max:
		// no difference at kv <= 48, data-dependent above.
		{"attn_tile_48_64", "kv", ""},
		// 4 and 2 splits may agree on a short cache: the edge is at 64 or 128.
		{"decode_splits_by_batch", "batch", "batch <= "},
		// the fuzz engine's drift models, plugged into a layer.
		{"fuzz.drift-rmsnorm-te-mod32", "rows", "rows % 32 == 0 -> B, otherwise -> A"},
		{"fuzz.drift-rmsnorm-vllm-256", "rows", "rows <= 255 -> A, rows >= 256 -> B"},
		{"fuzz.drift-gemm-splitk-by-m", "rows", "rows <= 64 -> A, rows >= 65 -> B"},
		// 4 splits while padded requests x heads < 132.
		{"fuzz.drift-decode-splits-by-batch", "batch", "batch <= "},
	}
	const plants, maxCases = 3, 40
	for ti, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			m, err := LookupDriftModel(tt.model)
			if err != nil {
				t.Fatal(err)
			}
			seed := uint64(7000 + 1000*ti)
			for p := range plants {
				cases := 0
				for ; cases < maxCases; cases++ {
					seed++
					c := m.Needs.Case(seed)
					c.Relation = spec.RelPathParity
					sites := PlantSites(m.Kind, c.Shape.Rows)
					site := sites[newRNG(seed, 99, 0).intn(len(sites))]
					if p == plants-1 {
						site = sites[len(sites)-1] // the last: final_norm, lm_head, the last layer's attention
					}
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
					dm := f.DriftMap
					if dm == nil || dm.Dim != tt.dim || !strings.Contains(dm.Rule, tt.rule) {
						t.Fatalf("seed %d: drift map %+v, want dim %s and a rule with %q", seed, dm, tt.dim, tt.rule)
					}
					for _, cl := range dm.Classes {
						if cl.Digest == "differs" && cl.Values[0] <= 48 {
							t.Fatalf("seed %d: tiles 48 and 64 differ at kv %d <= 48: %+v", seed, cl.Values[0], dm)
						}
					}
					t.Logf("plant %d at %s found after %d case(s), %v for the case with localisation; drift map %s: %s",
						p, site, cases+1, time.Since(start).Round(time.Millisecond), dm.Dim, dm.Rule)
					break
				}
				if cases == maxCases {
					t.Fatalf("plant %d: no finding in %d cases", p, maxCases)
				}
			}
		})
	}
}

// TestPlantedOnePath: a drift model in the engine only (the trainer keeps
// the fixed kernels) is found at its site too, and its map sweeps the
// engine's policy.
func TestPlantedOnePath(t *testing.T) {
	ctx := context.Background()
	site := Site{1, OpQKV}
	for seed := uint64(300); seed < 340; seed++ {
		c := (Gen{}).Case(seed)
		if c.Shape.Rows < 2 {
			continue
		}
		c.Relation = spec.RelPathParity
		c.Targets = []string{TrainPrefix + "fixed", InferPrefix + "fixed+gemm_splitk_by_m@" + site.String()}
		f, err := Check(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if f == nil {
			continue
		}
		if !strings.Contains(f.Message, "first divergence: "+site.String()+" ") || f.DriftMap == nil || f.DriftMap.Dim != "rows" {
			t.Fatalf("seed %d: %s (map %+v)", seed, f.Message, f.DriftMap)
		}
		return
	}
	t.Fatal("an engine-only split-K drift at L1.qkv was not found in 40 cases")
}
