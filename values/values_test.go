package values

import (
	"fmt"
	"math"
	"testing"

	goldenfile "github.com/bitparity/bitparity/internal/golden"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

var allDists = []spec.Dist{spec.DistNormal, spec.DistHeavy, spec.DistOutlier, spec.DistConstant,
	spec.DistSignedZero, spec.DistSubnormal, spec.DistNearOverflow, spec.DistTies, spec.DistBoundary}

var dtypes = []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32}

func hexRow(dt oracle.DType, vals []float32) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = oracle.Hex(dt, v)
	}
	return out
}

// TestGolden pins generator version 2: 12 values of a row of every
// distribution and dtype, at an attention-style row key, as dtype bits
// (testdata/golden.json; -update rewrites it, which only a deliberate new
// generator version may do).
func TestGolden(t *testing.T) {
	got := map[string][]string{}
	for _, d := range allDists {
		for _, dt := range dtypes {
			tn := Tensor{Seed: 20261203, ID: TensorQ, Dist: d, DType: dt, Scale: 1.5}
			vals := make([]float32, 12)
			if err := tn.Row(vals, 2<<32|7); err != nil {
				t.Fatal(err)
			}
			got[fmt.Sprintf("%s/%s", d, dt)] = hexRow(dt, vals)
		}
	}
	if !goldenfile.JSON(t, "testdata/golden.json", got, *update) {
		t.Log("generator version 2 changed")
	}
}

// TestValueIsRow checks that every value generated alone (Value) is the
// one Row writes, and that a row's values do not depend on its length
// (except outlier's column, which is drawn from it).
func TestValueIsRow(t *testing.T) {
	for _, d := range allDists {
		for _, dt := range dtypes {
			tn := Tensor{Seed: 9, ID: TensorK, Dist: d, DType: dt, Scale: 0.5}
			for _, n := range []int{1, 2, 33, 300} {
				row := make([]float32, n)
				if err := tn.Row(row, 5); err != nil {
					t.Fatal(err)
				}
				longer := make([]float32, n+17)
				if err := tn.Row(longer, 5); err != nil {
					t.Fatal(err)
				}
				for c := range n {
					v, err := tn.Value(5, c, n)
					if err != nil {
						t.Fatal(err)
					}
					if math.Float32bits(v) != math.Float32bits(row[c]) {
						t.Fatalf("%s %s n %d column %d: Value %v, Row %v", d, dt, n, c, v, row[c])
					}
					if d != spec.DistOutlier && math.Float32bits(longer[c]) != math.Float32bits(row[c]) {
						t.Fatalf("%s %s column %d: %v in a row of %d, %v in a row of %d", d, dt, c, row[c], n, longer[c], n+17)
					}
				}
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	tn := Tensor{Dist: "lognormal", DType: oracle.BF16, Scale: 1}
	if err := tn.Row(make([]float32, 4), 0); err == nil {
		t.Error("Row: unknown distribution accepted")
	}
	tn.Dist = spec.DistNormal
	if _, err := tn.Value(0, 4, 4); err == nil {
		t.Error("Value: column 4 of 4 accepted")
	}
	if _, err := DistCode("lognormal"); err == nil {
		t.Error("DistCode: unknown distribution accepted")
	}
}

// TestDistributions checks what each distribution promises over 200,000
// fp32 values: normal's moments and tails, heavy's heavier tails, one
// outlier per row, the signed-zero mixture, subnormal and near-overflow
// ranges, and ties' grid.
func TestDistributions(t *testing.T) {
	const n = 200000
	gen := func(d spec.Dist, dt oracle.DType) []float32 {
		vals := make([]float32, n)
		if err := (Tensor{Seed: 3, ID: TensorX, Dist: d, DType: dt, Scale: 1}).Row(vals, 0); err != nil {
			t.Fatal(err)
		}
		return vals
	}
	moments := func(vs []float32) (mean, variance, tail float64) {
		for _, v := range vs {
			mean += float64(v)
			if math.Abs(float64(v)) > 3 {
				tail++
			}
		}
		mean /= n
		for _, v := range vs {
			variance += (float64(v) - mean) * (float64(v) - mean)
		}
		return mean, variance / n, tail / n
	}
	// N(0,1): mean within 5 standard errors, variance within 2 %, P(|Z|>3) = 0.0027.
	m, v, tail := moments(gen(spec.DistNormal, oracle.FP32))
	if math.Abs(m) > 5/math.Sqrt(n) || math.Abs(v-1) > 0.02 || math.Abs(tail-0.0027) > 0.0006 {
		t.Errorf("normal: mean %.4f variance %.4f P(|z|>3) %.5f, want 0, 1, 0.0027", m, v, tail)
	}
	_, _, heavyTail := moments(gen(spec.DistHeavy, oracle.FP32))
	if heavyTail < 4*tail {
		t.Errorf("heavy: P(|x|>3) %.4f, want well above normal's %.4f (Student t3: 0.058)", heavyTail, tail)
	}
	big := 0
	for _, x := range gen(spec.DistOutlier, oracle.FP32) {
		if math.Abs(float64(x)) > 100 {
			big++
		}
	}
	if big != 1 {
		t.Errorf("outlier: %d values above 100 in a row, want 1", big)
	}
	var zeros, negZeros int
	for _, x := range gen(spec.DistSignedZero, oracle.BF16) {
		if x == 0 {
			zeros++
			if math.Signbit(float64(x)) {
				negZeros++
			}
		}
	}
	if math.Abs(float64(zeros)/n-2.0/3) > 0.01 || math.Abs(float64(negZeros)/n-1.0/3) > 0.01 {
		t.Errorf("signed_zero: %d zeros, %d of them -0, of %d: want 2/3 and 1/3", zeros, negZeros, n)
	}
	for _, dt := range dtypes {
		tiny, maxf := oracle.SmallestNormal(dt), oracle.MaxFinite(dt)
		for _, x := range gen(spec.DistSubnormal, dt) {
			if math.Abs(float64(x)) > float64(tiny) {
				t.Fatalf("subnormal %s: %v above the smallest normal %v", dt, x, tiny)
			}
		}
		for _, x := range gen(spec.DistNearOverflow, dt) {
			if a := math.Abs(float64(x)); a < 0.2499*float64(maxf) || a > float64(maxf) {
				t.Fatalf("near_overflow %s: %v outside [max/4, max] of %v", dt, x, maxf)
			}
		}
	}
	for _, x := range gen(spec.DistTies, oracle.FP32) {
		if k := float64(x) * 32; k != math.Trunc(k) || math.Abs(float64(x)) > 8 {
			t.Fatalf("ties: %v is not a multiple of 1/32 in [-8, 8]", x)
		}
	}
}

// TestSamplerEdges checks N(u) where its bit fields meet: the octave ends,
// the clamped deepest octave and the sign.
func TestSamplerEdges(t *testing.T) {
	if z := normal(0); z != quantiles[octaves-1][0] {
		t.Errorf("N(0) = %v, want the deepest node %v", z, quantiles[octaves-1][0])
	}
	if z := normal(1 << 63); z != -quantiles[octaves-1][0] {
		t.Errorf("N(1<<63) = %v, want %v", z, -quantiles[octaves-1][0])
	}
	if z := normal(1 << 62); z != quantiles[0][0] {
		t.Errorf("N(1<<62) = %v, want the median of |Z|, %v", z, quantiles[0][0])
	}
	if z := normal(math.MaxUint64 >> 1); z < 0 || z > 1e-15 {
		t.Errorf("N(2^63-1) = %v, want a value just above 0", z)
	}
	if z := normal(1<<61 - 1); z >= quantiles[1][0]+1e-9 || z <= quantiles[1][0]*0.999 {
		t.Errorf("N(2^61-1) = %v, want just above octave 1's end %v", z, quantiles[1][0])
	}
}
