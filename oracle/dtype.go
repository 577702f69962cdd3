package oracle

import (
	"fmt"
	"math"
	"strconv"

	"github.com/x448/float16"
)

// DType is a numeric format.
type DType uint8

const (
	FP32 DType = iota
	BF16
	FP16
)

var dtypeNames = []string{FP32: "fp32", BF16: "bf16", FP16: "fp16"}

func (d DType) String() string { return enumName(dtypeNames, uint8(d), "dtype") }

// ParseDType parses "fp32", "bf16" or "fp16".
func ParseDType(s string) (DType, error) {
	switch s {
	case "fp32", "float32", "f32":
		return FP32, nil
	case "bf16", "bfloat16":
		return BF16, nil
	case "fp16", "float16", "f16", "half":
		return FP16, nil
	}
	return 0, fmt.Errorf("unknown dtype %q (want fp32, bf16 or fp16)", s)
}

// Bits returns the number of bits of one value.
func (d DType) Bits() int {
	if d == FP32 {
		return 32
	}
	return 16
}

// BF16FromF32 rounds f to bfloat16, to nearest with ties to even. A NaN
// stays a NaN and becomes quiet (its top mantissa bit is set); its sign and
// the upper payload bits are kept.
func BF16FromF32(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN
		return uint16(b>>16) | 0x0040
	}
	// round to nearest even: add 0x7fff plus the lowest kept bit.
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToF32 widens a bfloat16 to fp32 exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// FP16FromF32 rounds f to IEEE binary16, to nearest with ties to even
// (github.com/x448/float16); NaN stays NaN (quiet).
func FP16FromF32(f float32) uint16 { return uint16(float16.Fromfloat32(f)) }

// FP16ToF32 widens a binary16 to fp32 exactly.
func FP16ToF32(h uint16) float32 { return float16.Frombits(h).Float32() }

// Round rounds an fp32 value to dtype d and widens it back: the value a
// kernel stores when it writes f as d.
func Round(d DType, f float32) float32 {
	switch d {
	case BF16:
		return BF16ToF32(BF16FromF32(f))
	case FP16:
		return FP16ToF32(FP16FromF32(f))
	}
	return f
}

// RoundSlice rounds every element of xs to d in place.
func RoundSlice(d DType, xs []float32) {
	switch d {
	case BF16:
		for i, x := range xs {
			xs[i] = BF16ToF32(BF16FromF32(x))
		}
	case FP16:
		for i, x := range xs {
			xs[i] = FP16ToF32(FP16FromF32(x))
		}
	}
}

// ToBits returns the bits of f in dtype d (f is rounded to d first).
func ToBits(d DType, f float32) uint32 {
	switch d {
	case BF16:
		return uint32(BF16FromF32(f))
	case FP16:
		return uint32(FP16FromF32(f))
	}
	return math.Float32bits(f)
}

// FromBits widens the bits of a d value to fp32.
func FromBits(d DType, bits uint32) float32 {
	switch d {
	case BF16:
		return BF16ToF32(uint16(bits))
	case FP16:
		return FP16ToF32(uint16(bits))
	}
	return math.Float32frombits(bits)
}

// Hex formats the bits of f in dtype d as fixed-width lowercase hex without
// a prefix: 4 digits for bf16/fp16, 8 for fp32.
func Hex(d DType, f float32) string {
	if d == FP32 {
		return fmt.Sprintf("%08x", ToBits(d, f))
	}
	return fmt.Sprintf("%04x", ToBits(d, f))
}

// ParseHex parses hex bits of dtype d (with or without 0x) into the fp32
// value they denote, exactly.
func ParseHex(d DType, s string) (float32, error) {
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = s[2:]
	}
	v, err := strconv.ParseUint(s, 16, d.Bits())
	if err != nil {
		return 0, fmt.Errorf("%s hex %q: %w", d, s, err)
	}
	return FromBits(d, uint32(v)), nil
}

// Decimal formats f (a value of dtype d) as the shortest decimal that
// round-trips in fp32.
func Decimal(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 32) }

// MaxFinite returns the largest finite value of d.
func MaxFinite(d DType) float32 {
	switch d {
	case BF16:
		return BF16ToF32(0x7f7f)
	case FP16:
		return 65504
	}
	return math.MaxFloat32
}

// SmallestNormal returns the smallest positive normal value of d.
func SmallestNormal(d DType) float32 {
	switch d {
	case BF16:
		return BF16ToF32(0x0080)
	case FP16:
		return FP16ToF32(0x0400)
	}
	return math.Float32frombits(0x00800000)
}
