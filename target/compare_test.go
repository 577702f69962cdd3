package target

import (
	"math"
	"testing"

	"github.com/bitparity/bitparity/oracle"
)

// TestMaxULPBound: the bound a target may declare is below the ulps from 0
// to the largest finite value of every dtype, by one for the fewest.
func TestMaxULPBound(t *testing.T) {
	least := uint64(math.MaxUint64)
	for _, d := range []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32} {
		least = min(least, oracle.FiniteULPs(d))
	}
	if MaxULPBound != least-1 {
		t.Fatalf("MaxULPBound = %d, want %d", MaxULPBound, least-1)
	}
	if err := CheckULPBound(MaxULPBound); err != nil {
		t.Errorf("CheckULPBound(MaxULPBound) = %v, want nil", err)
	}
	if err := CheckULPBound(MaxULPBound + 1); err == nil {
		t.Errorf("CheckULPBound(%d) = nil, want an error", MaxULPBound+1)
	}
}

// TestCompareNonFinite: a differing column that holds an infinity or a
// NaN on either side marks its row NonFinite, whatever its ulps; finite
// differences do not.
func TestCompareNonFinite(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, tc := range []struct {
		name   string
		a, b   []float32
		nonFin bool
	}{
		{"finite", []float32{1, 2}, []float32{1, 2.5}, false},
		{"inf", []float32{1, 2}, []float32{1, inf}, true},
		{"inf on the other side", []float32{-inf, 2}, []float32{1, 2}, true},
		{"nan", []float32{1, 2}, []float32{nan, 2}, true},
		{"equal infinities", []float32{inf, 2}, []float32{inf, 3}, false},
	} {
		d := CompareSlices(tc.a, tc.b, 2, []int{0}, []int{0}, oracle.BF16)
		if len(d) != 1 || d[0].NonFinite != tc.nonFin {
			t.Errorf("%s: diffs %+v, want one with NonFinite %v", tc.name, d, tc.nonFin)
		}
	}
}
