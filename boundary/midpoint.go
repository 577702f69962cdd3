// Package boundary steers generated inputs so that outputs land on (or a
// few fp32 ulps from) a rounding midpoint of the output dtype, where a
// reduction-order change of one fp32 ulp flips an output bit.
//
// It depends on the oracle only: the nudges take raw rows and the schedule
// the oracle target declares, and change values in place, row by row, from
// the row's own values (and the tensors all rows share), so a row's bits
// never depend on the batch it sits in. docs/detection.md says how it works
// and what it buys.
package boundary

import (
	"math"

	"github.com/bitparity/bitparity/oracle"
)

// lowBits is the number of fp32 mantissa bits below dt's last mantissa bit:
// 16 for bf16, 13 for fp16, 0 for fp32 (no boundary).
func lowBits(dt oracle.DType) uint {
	switch dt {
	case oracle.BF16:
		return 16
	case oracle.FP16:
		return 13
	}
	return 0
}

// Midpoint returns the rounding midpoint of dt nearest to the fp32 value v:
// the fp32 value halfway between the two neighbouring dt values around v,
//
//	bf16: bits(t) = bits(v) &^ 0xffff | 0x8000
//	fp16: bits(t) = bits(v) &^ 0x1fff | 0x1000   (fp16 normal range only)
//
// and evenBelow, which says whether the neighbour of smaller magnitude is
// the even one (where round-to-nearest-even sends t itself). ok is false
// for fp32 (no boundary), NaN, Inf, zero, and fp16 values outside its normal
// range.
func Midpoint(v float32, dt oracle.DType) (t float32, evenBelow bool, ok bool) {
	n := lowBits(dt)
	if n == 0 || v == 0 || math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return 0, false, false
	}
	if dt == oracle.FP16 {
		a := math.Abs(float64(v))
		if a < float64(oracle.SmallestNormal(oracle.FP16)) || a >= float64(oracle.MaxFinite(oracle.FP16)) {
			return 0, false, false
		}
	}
	b := math.Float32bits(v)
	mask := uint32(1)<<n - 1
	t = math.Float32frombits(b&^mask | 1<<(n-1))
	return t, (b>>n)&1 == 0, true
}

// ULPsToMidpoint is the distance in fp32 ulps from v to its nearest dt
// rounding midpoint (0: v is an exact tie), or math.MaxUint32 when v has
// none (see Midpoint).
func ULPsToMidpoint(v float32, dt oracle.DType) uint32 {
	t, _, ok := Midpoint(v, dt)
	if !ok {
		return math.MaxUint32
	}
	a, b := math.Float32bits(v)&0x7fffffff, math.Float32bits(t)&0x7fffffff
	if a > b {
		return a - b
	}
	return b - a
}

// Score is the targeted-search objective over fp32 pre-rounding outputs:
//
//	score = Σ_i max(0, k+1 - ULPsToMidpoint(vals[i], dt))
//
// so an exact tie counts k+1, a value k ulps away counts 1, farther values
// nothing.
//
// The loop is ULPsToMidpoint on the magnitude's bits a: values with a
// midpoint are those with a in [lo, hi) (nonzero and finite; fp16's normal
// range), whose midpoint's magnitude is a &^ mask | half.
func Score(vals []float32, dt oracle.DType, k uint32) int {
	n := lowBits(dt)
	if n == 0 {
		return 0
	}
	lo, hi := uint32(1), uint32(0x7f800000)
	if dt == oracle.FP16 {
		lo, hi = math.Float32bits(oracle.SmallestNormal(oracle.FP16)), math.Float32bits(oracle.MaxFinite(oracle.FP16))
	}
	mask, half := uint32(1)<<n-1, uint32(1)<<(n-1)
	s := 0
	for _, v := range vals {
		a := math.Float32bits(v) & 0x7fffffff
		if a < lo || a >= hi {
			continue
		}
		d := a - (a&^mask | half)
		if a < a&^mask|half {
			d = -d
		}
		if d <= k {
			s += int(k + 1 - d)
		}
	}
	return s
}

// Near counts the values within k fp32 ulps of a dt rounding midpoint.
func Near(vals []float32, dt oracle.DType, k uint32) int {
	n := 0
	for _, v := range vals {
		if ULPsToMidpoint(v, dt) <= k {
			n++
		}
	}
	return n
}
