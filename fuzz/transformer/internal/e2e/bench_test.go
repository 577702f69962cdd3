package e2e

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// BenchmarkInvariantCase measures the invariant check at small sizes
// (Gen{} cases, both paths, log-prob parity): cases/s is 1/(ns/op).
func BenchmarkInvariantCase(b *testing.B) {
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		c := (Gen{}).Case(uint64(1000 + i%64))
		f, err := Check(ctx, c)
		if err != nil || f != nil {
			b.Fatalf("case %d: finding %v error %v", i, f, err)
		}
	}
}

// BenchmarkInvariantPathParity is BenchmarkInvariantCase with taps on every
// op (path parity).
func BenchmarkInvariantPathParity(b *testing.B) {
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		c := (Gen{}).Case(uint64(1000 + i%64))
		c.Relation = spec.RelPathParity
		f, err := Check(ctx, c)
		if err != nil || f != nil {
			b.Fatalf("case %d: finding %v error %v", i, f, err)
		}
	}
}

// BenchmarkLocalize measures the time from a planted drift's mismatch to
// the named layer and op with its drift map (Localize: both paths re-run
// with taps, then the sweep).
func BenchmarkLocalize(b *testing.B) {
	for _, model := range []string{"gemm_splitk_by_m", "rmsnorm_rows_mod32", "decode_splits_by_batch"} {
		b.Run(model, func(b *testing.B) {
			m, _ := LookupDriftModel(model)
			var st *Setup
			for seed := uint64(7001); st == nil; seed++ {
				c := (Gen{MinSeqLen: 24}).Case(seed)
				c.Relation = spec.RelPathParity
				c, _ = Plant(c, model, PlantSites(m.Kind, c.Shape.Rows)[0])
				if f, _ := Check(context.Background(), c); f != nil {
					st, _ = FromCase(c)
				}
			}
			for b.Loop() {
				if _, _, err := Localize(context.Background(), st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
