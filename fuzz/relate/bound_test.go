package relate

import (
	"context"
	"math"
	"testing"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestOracleParityBoundNonFinite: an ulp bound, even the largest a target
// may declare, never covers an infinity or a NaN where the oracle has a
// finite value: the infinity of the oracle value's sign is about 16384
// bf16 ulps from a value near 1, within the bound, and must be a finding
// all the same.
func TestOracleParityBoundNonFinite(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    float64 // an infinity takes the sign of the oracle's value
	}{
		{"Inf", math.Inf(1)},
		{"NaN", math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := &testTarget{
				info: target.Info{Name: "test-overflows", Op: spec.OpRMSNorm, Device: "test", Invariant: true, ULPBound: target.MaxULPBound},
				run: oracleThen(func(_ *target.Batch, o *target.Output) {
					for r := range o.Rows {
						v := &o.Values[r*o.Cols+3]
						*v = float32(math.Copysign(tc.v, float64(*v)))
					}
				}),
			}
			c := rmsCase(spec.RelOracleParity, tg.info.Name, 2, 64, spec.RelParams{})
			f, err := Check(context.Background(), c, tg)
			if err != nil {
				t.Fatal(err)
			}
			if f == nil || f.Kind != spec.KindMismatch || f.Col != 3 {
				t.Fatalf("%s within a bound of %d ulps: finding %+v, want a mismatch at column 3", tc.name, target.MaxULPBound, f)
			}
		})
	}
}
