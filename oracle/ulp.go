package oracle

// ordered maps the bits of a d value to an integer that increases with the
// value: non-negative values keep their bits, negative values map below zero
// (-0 maps to 0 like +0).
func ordered(d DType, bits uint32) int64 {
	sign := uint32(1) << (d.Bits() - 1)
	mag := int64(bits &^ sign)
	if bits&sign != 0 {
		return -mag
	}
	return mag
}

// IsNaN reports whether bits of dtype d encode a NaN.
func IsNaN(d DType, bits uint32) bool {
	switch d {
	case FP32:
		return bits&0x7fffffff > 0x7f800000
	case BF16:
		return bits&0x7fff > 0x7f80
	}
	return bits&0x7fff > 0x7c00
}

// IsFinite reports whether bits of dtype d encode a finite value (neither
// an infinity nor a NaN).
func IsFinite(d DType, bits uint32) bool {
	switch d {
	case FP32:
		return bits&0x7fffffff < 0x7f800000
	case BF16:
		return bits&0x7fff < 0x7f80
	}
	return bits&0x7fff < 0x7c00
}

// FiniteULPs is the number of ulps from 0 to the largest finite value of d
// (32639 for bf16, 31743 for fp16, 2139095039 for fp32): an ulp bound of
// that many holds 0 equal to the largest finite value, so it bounds
// nothing.
func FiniteULPs(d DType) uint64 {
	return uint64(ordered(d, ToBits(d, MaxFinite(d))))
}

// Distance is how far apart two values of one dtype are.
type Distance struct {
	// ULPs is the number of representable values of the dtype between a and
	// b plus one (0 when equal as numbers): |ord(a) - ord(b)| on the
	// ordered-integer view of the bits. +0 and -0 are 0 ulps apart.
	ULPs uint64
	// SameBits is true when the bits are identical.
	SameBits bool
	// SignedZero is true when one is +0 and the other -0: 0 ulps, other bits.
	SignedZero bool
	// NaN is true when either is NaN. NaNs are compared by bits: two NaNs
	// with the same bits are SameBits; otherwise ULPs is MaxUint64.
	NaN bool
}

// ULPDistance compares a and b as values of dtype d (each is first rounded
// to d, which is exact for values already of that dtype).
func ULPDistance(d DType, a, b float32) Distance {
	return ULPDistanceBits(d, ToBits(d, a), ToBits(d, b))
}

// ULPDistanceBits compares two values of dtype d given by their bits.
func ULPDistanceBits(d DType, a, b uint32) Distance {
	r := Distance{SameBits: a == b}
	if IsNaN(d, a) || IsNaN(d, b) {
		r.NaN = true
		if !r.SameBits {
			r.ULPs = ^uint64(0)
		}
		return r
	}
	oa, ob := ordered(d, a), ordered(d, b)
	diff := oa - ob
	if diff < 0 {
		diff = -diff
	}
	r.ULPs = uint64(diff)
	r.SignedZero = !r.SameBits && oa == 0 && ob == 0
	return r
}
