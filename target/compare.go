package target

import (
	"math"

	"github.com/bitparity/bitparity/oracle"
)

// CompareHost compares, for every i, row pa[i] of a with row pb[i] of b
// (positions within the outputs' Rows) in dtype dt and returns one summary
// per pair that differs, in the order of the pairs. Two values are equal
// when their bits in dt are equal (each is rounded to dt first, exact for
// values of that dtype): NaNs compare by bits, +0 and -0 differ (0 ulps).
// MaxULPs is the largest oracle.ULPDistanceBits over the row; SignedZero
// says whether some differing column is +0 against -0, NonFinite whether
// one holds an infinity or a NaN.
func CompareHost(a, b *Output, pa, pb []int, dt oracle.DType) []RowDiff {
	return CompareSlices(a.Values, b.Values, a.Cols, pa, pb, dt)
}

// CompareSlices is CompareHost on row-major slices of cols values per
// row (av and bv hold the rows that pa and pb index).
func CompareSlices(av, bv []float32, cols int, pa, pb []int, dt oracle.DType) []RowDiff {
	var diffs []RowDiff
	for i := range pa {
		ra := av[pa[i]*cols : (pa[i]+1)*cols]
		rb := bv[pb[i]*cols : (pb[i]+1)*cols]
		d := RowDiff{PosA: pa[i], PosB: pb[i], FirstCol: -1}
		for j, x := range ra {
			y := rb[j]
			if math.Float32bits(x) == math.Float32bits(y) {
				continue
			}
			xb, yb := oracle.ToBits(dt, x), oracle.ToBits(dt, y)
			if xb == yb {
				continue
			}
			if d.Count == 0 {
				d.FirstCol = j
			}
			d.Count++
			dist := oracle.ULPDistanceBits(dt, xb, yb)
			d.MaxULPs = max(d.MaxULPs, dist.ULPs)
			d.SignedZero = d.SignedZero || dist.SignedZero
			d.NonFinite = d.NonFinite || !oracle.IsFinite(dt, xb) || !oracle.IsFinite(dt, yb)
		}
		if d.Count > 0 {
			diffs = append(diffs, d)
		}
	}
	return diffs
}
