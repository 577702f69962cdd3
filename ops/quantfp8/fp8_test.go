package quantfp8

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// codes are the finite non-negative values of f, found by enumerating
// all 128 positive codes with an independent decoding (sign, exponent
// field, mantissa field read from the code with math/big), sorted by value
// (their codes increase with their values).
func codes(f Format) (vals []*big.Rat, bits []uint8) {
	mant := 3
	bias := 7
	if f == E5M2 {
		mant, bias = 2, 15
	}
	for b := 0; b < 0x80; b++ {
		ef, mf := b>>mant, b&(1<<mant-1)
		if (f == E4M3 && ef == 15 && mf == 7) || (f == E5M2 && ef == 31) {
			continue // NaN or infinity
		}
		sig := big.NewRat(int64(mf), int64(1)<<mant) // mf / 2^m
		exp := ef - bias
		if ef == 0 {
			exp = 1 - bias
		} else {
			sig.Add(sig, big.NewRat(1, 1))
		}
		v := new(big.Rat).Set(sig)
		p := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(abs(exp))))
		if exp >= 0 {
			v.Mul(v, p)
		} else {
			v.Quo(v, p)
		}
		vals, bits = append(vals, v), append(bits, uint8(b))
	}
	return vals, bits
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// nearest is the code of x by brute force over every finite code: the
// nearest value (exact rational distances), the even code (mantissa bit 0
// clear) on a tie, the largest finite value above it (saturation).
func nearest(f Format, x float32, vals []*big.Rat, bits []uint8) uint8 {
	var sign uint8
	if math.Signbit(float64(x)) {
		sign = 0x80
	}
	if math.IsInf(float64(x), 0) {
		return sign | bits[len(bits)-1]
	}
	a := new(big.Rat).SetFloat64(math.Abs(float64(x)))
	best := 0
	var bestD *big.Rat
	for i, v := range vals {
		d := new(big.Rat).Sub(a, v)
		d.Abs(d)
		switch {
		case bestD == nil, d.Cmp(bestD) < 0, d.Cmp(bestD) == 0 && bits[i]&1 == 0:
			best, bestD = i, d
		}
	}
	return sign | bits[best]
}

// TestEncodeEnumeration checks Encode against the brute-force nearest
// code on every midpoint between neighbouring codes and one fp32 ulp
// either side, every code's value, values past the largest, and random
// fp32 values of every magnitude.
func TestEncodeEnumeration(t *testing.T) {
	for _, f := range []Format{E4M3, E5M2} {
		vals, bits := codes(f)
		var xs []float32
		for i, v := range vals {
			fv, _ := v.Float32()
			xs = append(xs, fv, -fv)
			if i+1 < len(vals) {
				mid, _ := new(big.Rat).Quo(new(big.Rat).Add(v, vals[i+1]), big.NewRat(2, 1)).Float32() // exact in fp32
				xs = append(xs, mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1e9), -mid)
			}
		}
		xs = append(xs, 1e9, -1e9, float32(math.Inf(1)), float32(math.Inf(-1)), math.SmallestNonzeroFloat32, float32(math.Copysign(0, -1)))
		r := rand.New(rand.NewPCG(1, 2))
		for range 2000 {
			exp := uint32(r.IntN(110) + 60) // 2^-67 .. 2^42
			xs = append(xs, math.Float32frombits(r.Uint32()&0x807fffff|exp<<23))
		}
		for _, x := range xs {
			if x != x {
				continue
			}
			if got, want := Encode(f, x), nearest(f, x, vals, bits); got != want {
				t.Fatalf("%s: Encode(%g) = %#02x, the nearest code is %#02x", f, x, got, want)
			}
		}
		if got := Encode(f, float32(math.NaN())); got != NaN {
			t.Errorf("%s: Encode(NaN) = %#02x, want %#02x", f, got, NaN)
		}
		for i, b := range bits { // decode is the inverse of the enumeration
			want, _ := vals[i].Float32()
			if got := Decode(f, b); got != want {
				t.Errorf("%s: Decode(%#02x) = %g, want %g", f, b, got, want)
			}
		}
	}
	if Decode(E4M3, 0x7e) != 448 || Decode(E5M2, 0x7b) != 57344 || Encode(E4M3, 464) != 0x7e || Encode(E4M3, 2e-3) != 0x01 {
		t.Error("e4m3 max 448 (0x7e), e5m2 max 57344 (0x7b), 464 saturates to 448, 2^-9 is 0x01")
	}
}
