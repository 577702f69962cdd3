package values

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Tensor ids, part of the generator's contract (both versions).
const (
	TensorX uint64 = iota + 1
	TensorW
	TensorLogits
	TensorTargets
	TensorQ
	TensorK
	TensorV
)

// Dist codes, as gpu/kernels/gen.cuh numbers them (GEN_NORMAL ...).
const (
	codeNormal = iota
	codeHeavy
	codeOutlier
	codeConstant
	codeSignedZero
	codeSubnormal
	codeNearOverflow
	codeTies
)

var distCodes = map[spec.Dist]int{
	"": codeNormal, spec.DistNormal: codeNormal, spec.DistBoundary: codeNormal,
	spec.DistHeavy: codeHeavy, spec.DistOutlier: codeOutlier, spec.DistConstant: codeConstant,
	spec.DistSignedZero: codeSignedZero, spec.DistSubnormal: codeSubnormal,
	spec.DistNearOverflow: codeNearOverflow, spec.DistTies: codeTies,
}

// DistCode is d's number in gpu/kernels/gen.cuh. Boundary has normal's
// code: its values are normal ones, nudged afterwards by the host.
func DistCode(d spec.Dist) (int, error) {
	c, ok := distCodes[d]
	if !ok {
		return 0, fmt.Errorf("unknown value distribution %q", d)
	}
	return c, nil
}

const golden = 0x9e3779b97f4a7c15

// Mix is splitmix64's step, the mixer of every seeded stream: the
// generator's row states and draws, the campaign's case seeds, item
// choices.
func Mix(x uint64) uint64 {
	x += golden
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// state is the row state s of (seed, tensor, key).
func state(seed, tensor, key uint64) uint64 { return Mix(Mix(seed^tensor*golden) ^ key) }

// draw is d(k) of row state s.
func draw(s, k uint64) uint64 { return Mix(s + k*golden) }

// Normal table shape: octaves of probability, cells per octave.
const (
	octaves  = 62
	cellBits = 5
	cells    = 1 << cellBits
)

// normal is N(u): the inverse-CDF sampler of the package comment. w = u<<1
// drops the sign, so clz64(w) is clz64(r)-1 and w << (e+1) is r << (e+2);
// |z| >= 0 always, so setting the sign bit is negation.
func normal(u uint64) float64 {
	w := u << 1
	e := min(uint(bits.LeadingZeros64(w)), octaves-1)
	f := w << (e + 1)
	q := &quantiles[e]
	j := f >> (64 - cellBits)
	t := float64(int64(f<<cellBits>>11)) * 0x1p-53
	a := q[j]
	z := a + float64(t*float64(q[j+1]-a))
	return math.Float64frombits(math.Float64bits(z) | u&(1<<63))
}

// Tensor is one input tensor of a seeded case under generator version 2.
type Tensor struct {
	Seed  uint64
	ID    uint64    // TensorX, TensorW, ...
	Dist  spec.Dist // "" is normal; boundary is normal (the caller nudges)
	DType oracle.DType
	Scale float64 // σ of the package comment
}

// Row writes the len(dst) values of the row with key into dst, each
// rounded to t.DType (as float32).
func (t Tensor) Row(dst []float32, key uint64) error {
	code, err := DistCode(t.Dist)
	if err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	s := state(t.Seed, t.ID, key)
	sc := t.Scale
	switch code {
	case codeNormal:
		for i := range dst {
			dst[i] = float32(normal(draw(s, uint64(i))) * sc)
		}
	case codeHeavy:
		for i := range dst {
			k := 4 * uint64(i)
			n, a, b, c := normal(draw(s, k)), normal(draw(s, k+1)), normal(draw(s, k+2)), normal(draw(s, k+3))
			dst[i] = float32(heavy(n, a, b, c) * sc)
		}
	case codeOutlier:
		for i := range dst {
			dst[i] = float32(normal(draw(s, uint64(i))) * sc)
		}
		oracle.RoundSlice(t.DType, dst)
		at := draw(s, uint64(len(dst))) % uint64(len(dst))
		dst[at] = oracle.Round(t.DType, float32(float64(dst[at])*1000))
		return nil
	case codeConstant:
		v := oracle.Round(t.DType, float32(normal(draw(s, 0))*sc))
		for i := range dst {
			dst[i] = v
		}
		return nil
	case codeSignedZero:
		// the normal value is drawn for every column and then selected, so
		// that the class (random) costs no mispredicted branch
		for i := range dst {
			k := 2 * uint64(i)
			cls := draw(s, k) % 3
			b := math.Float32bits(float32(normal(draw(s, k+1)) * sc))
			if cls == 0 {
				b = 0
			}
			if cls == 1 {
				b = 1 << 31 // -0
			}
			dst[i] = math.Float32frombits(b)
		}
	case codeSubnormal:
		tiny := float64(oracle.SmallestNormal(t.DType))
		for i := range dst {
			dst[i] = float32(subnormal(draw(s, uint64(i)), tiny))
		}
	case codeNearOverflow:
		big := float64(oracle.MaxFinite(t.DType))
		for i := range dst {
			dst[i] = float32(nearOverflow(draw(s, uint64(i)), big))
		}
	case codeTies:
		for i := range dst {
			dst[i] = float32(ties(draw(s, uint64(i))) * sc)
		}
	}
	oracle.RoundSlice(t.DType, dst)
	return nil
}

// Value returns the value at column col of the row with key, in a row of n
// columns (n matters only to outlier), as Row writes it.
func (t Tensor) Value(key uint64, col, n int) (float32, error) {
	code, err := DistCode(t.Dist)
	if err != nil {
		return 0, err
	}
	if col < 0 || col >= n {
		return 0, fmt.Errorf("column %d of a row of %d values", col, n)
	}
	s, i, sc := state(t.Seed, t.ID, key), uint64(col), t.Scale
	var v float64
	switch code {
	case codeNormal:
		v = normal(draw(s, i)) * sc
	case codeHeavy:
		v = heavy(normal(draw(s, 4*i)), normal(draw(s, 4*i+1)), normal(draw(s, 4*i+2)), normal(draw(s, 4*i+3))) * sc
	case codeOutlier:
		x := oracle.Round(t.DType, float32(normal(draw(s, i))*sc))
		if draw(s, uint64(n))%uint64(n) == i {
			x = oracle.Round(t.DType, float32(float64(x)*1000))
		}
		return x, nil
	case codeConstant:
		v = normal(draw(s, 0)) * sc
	case codeSignedZero:
		switch draw(s, 2*i) % 3 {
		case 0:
			return 0, nil
		case 1:
			return float32(math.Copysign(0, -1)), nil
		}
		v = normal(draw(s, 2*i+1)) * sc
	case codeSubnormal:
		v = subnormal(draw(s, i), float64(oracle.SmallestNormal(t.DType)))
	case codeNearOverflow:
		v = nearOverflow(draw(s, i), float64(oracle.MaxFinite(t.DType)))
	case codeTies:
		v = ties(draw(s, i)) * sc
	}
	return oracle.Round(t.DType, float32(v)), nil
}

// heavy is n / sqrt(((a·a + b·b) + c·c)/3 + 1e-12), every step rounded.
func heavy(n, a, b, c float64) float64 {
	ss := float64(a*a) + float64(b*b)
	ss += float64(c * c)
	ss = ss/3 + 1e-12
	return n / math.Sqrt(ss)
}

// subnormal is (2u - 1)·tiny for u = (h>>11)·2^-53.
func subnormal(h uint64, tiny float64) float64 {
	u := float64(int64(h>>11)) * 0x1p-53
	return float64(float64(u*2)-1) * tiny
}

// nearOverflow is ±(0.25 + 0.75u)·big for u = ((h<<1)>>11)·2^-53, negative
// when bit 63 of h is set.
func nearOverflow(h uint64, big float64) float64 {
	u := float64(int64(h<<1>>11)) * 0x1p-53
	v := float64(0.25+float64(0.75*u)) * big
	if int64(h) < 0 {
		return -v
	}
	return v
}

// ties is m·2^(p-5) for m = (h mod 2^32) mod 33 - 16, p = (h>>32) mod 5:
// small multiples of 1/8 and their powers of two, exact.
func ties(h uint64) float64 {
	m := int(uint32(h)%33) - 16
	p := int((h >> 32) % 5)
	return float64(m) * tiesScale[p]
}

var tiesScale = [5]float64{0x1p-5, 0x1p-4, 0x1p-3, 0x1p-2, 0x1p-1}
