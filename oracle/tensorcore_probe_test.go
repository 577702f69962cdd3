package oracle

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// The H200 tensor-core probe: tcMode describes one instruction the probe
// runs (gpu/probes/tensorcore/tcprobe.cu), tcTiles generates its inputs.
// Each tile is one instruction: A is M x K (row-major), B is K x N
// (row-major, b[k][n]), C and D are M x N fp32; D[i][j] = DotAdd(A[i][:],
// B[:][j], C[i][j]) is what the model must reproduce.
type tcMode struct {
	Name    string
	Format  MMAFormat
	M, N, K int
	Tiles   int // tiles drawn; Tiles*M*N dot products
}

// tcModes are the probed instructions: at least 2^20 dot products each.
var tcModes = []tcMode{
	{"mma-bf16", MMABF16, 16, 8, 16, 8192},
	{"mma-fp16", MMAFP16, 16, 8, 16, 8192},
	{"mma-tf32", MMATF32, 16, 8, 8, 8192},
	{"wgmma-bf16", MMABF16, 64, 8, 16, 2048},
	{"wgmma-fp16", MMAFP16, 64, 8, 16, 2048},
}

// tcTile is one tile's inputs as fp32 values (tf32 inputs keep their low
// 13 bits, which the instruction must ignore).
type tcTile struct {
	Class   string
	A, B, C []float32
}

// tcClasses are the input families; tile t draws class t % len(tcClasses).
var tcClasses = []string{"rawbits", "narrow", "cancel", "spread", "cdominant", "onebig", "subnormal", "fewbits", "zerohuge", "specials"}

// tcGen draws the values of one format.
type tcGen struct {
	r *rand.Rand
	f MMAFormat
}

// prec is the format's significand precision in bits.
func (g tcGen) prec() int {
	if g.f == MMABF16 {
		return 8
	}
	return 11
}

func (g tcGen) maxExp() int {
	if g.f == MMAFP16 {
		return 15
	}
	return 127
}

// cut rounds x to the format (tf32: truncates and sets random low bits).
func (g tcGen) cut(x float64) float32 {
	if d := g.dtype(); d != FP32 {
		return Round(d, float32(x))
	}
	u := math.Float32bits(float32(x))
	if u&0x7f800000 == 0x7f800000 {
		return math.Float32frombits(u)
	}
	return math.Float32frombits(u&^0x1fff | uint32(g.r.Uint64())&0x1fff)
}

// val is a random value of the format with exponent in [lo, hi] (clamped
// to the format's range; below its normal range the value is subnormal or
// zero) and a random sign, keeping only the top `bits` fraction bits
// random (0: all of them).
func (g tcGen) val(lo, hi, bits int) float32 {
	e := lo + g.r.IntN(hi-lo+1)
	e = min(e, g.maxExp())
	q := g.prec() - 1
	if bits == 0 || bits > q {
		bits = q
	}
	m := float64(g.r.IntN(1<<bits)) * math.Ldexp(1, -bits)
	x := math.Ldexp(1+m, e)
	if g.r.IntN(2) == 0 {
		x = -x
	}
	return g.cut(x)
}

// raw is a random bit pattern of the format.
func (g tcGen) raw() float32 {
	return FromBits(g.dtype(), uint32(g.r.Uint64()))
}

// special is one of the edge values of the format.
func (g tcGen) special() float32 {
	inf := float32(math.Inf(1))
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, inf, -inf, float32(math.NaN()),
		MaxFinite(g.dtype()), -MaxFinite(g.dtype()), SmallestNormal(g.dtype())}
	v := vals[g.r.IntN(len(vals))]
	if g.r.IntN(3) == 0 {
		return g.val(-3, 3, 0)
	}
	return v
}

func (g tcGen) dtype() DType { return mmaDType(g.f) }

// mmaDType is the dtype whose bits hold a value of format f: bf16, fp16,
// or fp32 (tf32 and no tensor core).
func mmaDType(f MMAFormat) DType {
	switch f {
	case MMABF16:
		return BF16
	case MMAFP16:
		return FP16
	}
	return FP32
}

// accF32 draws an fp32 accumulator with exponent in [lo, hi].
func accF32(r *rand.Rand, lo, hi int) float32 {
	e := lo + r.IntN(hi-lo+1)
	x := math.Ldexp(1+float64(r.Uint64()>>41)*math.Ldexp(1, -23), e)
	if r.IntN(2) == 0 {
		x = -x
	}
	return float32(x)
}

// tcTiles returns the n inputs of mode md drawn from seed; tile t depends
// only on (seed, md.Name, t).
func tcTiles(md tcMode, seed uint64, n int) []tcTile {
	h := uint64(14695981039346656037)
	for _, c := range []byte(md.Name) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	tiles := make([]tcTile, n)
	for t := range tiles {
		r := rand.New(rand.NewPCG(seed^h, uint64(t)))
		g := tcGen{r: r, f: md.Format}
		cls := tcClasses[t%len(tcClasses)]
		a := make([]float32, md.M*md.K)
		b := make([]float32, md.K*md.N)
		c := make([]float32, md.M*md.N)
		fill := func(xs []float32, f func(i int) float32) {
			for i := range xs {
				xs[i] = f(i)
			}
		}
		minE := -126
		if md.Format == MMAFP16 {
			minE = -14
		}
		switch cls {
		case "rawbits":
			fill(a, func(int) float32 { return g.raw() })
			fill(b, func(int) float32 { return g.raw() })
			fill(c, func(int) float32 { return math.Float32frombits(uint32(r.Uint64())) })
		case "narrow":
			fill(a, func(int) float32 { return g.val(-3, 3, 0) })
			fill(b, func(int) float32 { return g.val(-3, 3, 0) })
			fill(c, func(int) float32 { return accF32(r, -3, 6) })
		case "cancel":
			fill(a, func(int) float32 { return g.val(-3, 3, 0) })
			fill(b, func(int) float32 { return g.val(-3, 3, 0) })
			for k := 1; k < md.K; k += 2 {
				for i := 0; i < md.M; i++ {
					a[i*md.K+k] = a[i*md.K+k-1]
				}
				for j := 0; j < md.N; j++ {
					v := -b[(k-1)*md.N+j]
					if r.IntN(2) == 0 {
						v = g.cut(float64(math.Float32frombits(math.Float32bits(v) ^ 1<<(24-g.prec()))))
					}
					b[k*md.N+j] = v
				}
			}
			fill(c, func(int) float32 {
				switch r.IntN(3) {
				case 0:
					return 0
				case 1:
					return accF32(r, -30, -10)
				}
				return accF32(r, -3, 3)
			})
		case "spread":
			lo, hi := -20, 20
			if md.Format == MMAFP16 {
				lo, hi = -14, 15
			}
			fill(a, func(int) float32 { return g.val(lo, hi, 0) })
			fill(b, func(int) float32 { return g.val(lo, hi, 0) })
			fill(c, func(int) float32 { return accF32(r, -40, 40) })
		case "cdominant":
			fill(a, func(int) float32 { return g.val(-3, 3, 0) })
			fill(b, func(int) float32 { return g.val(-3, 3, 0) })
			fill(c, func(int) float32 { return accF32(r, 8, 30) })
		case "onebig":
			lo, hi := -30, -10
			if md.Format == MMAFP16 {
				lo, hi = -14, -4
			}
			fill(a, func(int) float32 { return g.val(lo, hi, 0) })
			fill(b, func(int) float32 { return g.val(lo, hi, 0) })
			k := r.IntN(md.K)
			for i := 0; i < md.M; i++ {
				a[i*md.K+k] = g.val(-3, 3, 0)
			}
			for j := 0; j < md.N; j++ {
				b[k*md.N+j] = g.val(-3, 3, 0)
			}
			fill(c, func(int) float32 {
				if r.IntN(2) == 0 {
					return 0
				}
				return accF32(r, -50, 0)
			})
		case "subnormal":
			fill(a, func(int) float32 { return g.val(minE-12, minE+4, 0) })
			fill(b, func(int) float32 {
				if md.Format == MMAFP16 {
					return g.val(-6, 15, 0)
				}
				return g.val(-20, 10, 0)
			})
			fill(c, func(int) float32 {
				switch r.IntN(3) {
				case 0:
					return math.Float32frombits(uint32(r.Uint64()) & 0x807fffff) // fp32 subnormal or zero
				case 1:
					return 0
				}
				return accF32(r, -140, -100)
			})
		case "fewbits":
			fill(a, func(int) float32 { return g.val(-2, 2, 2) })
			fill(b, func(int) float32 { return g.val(-2, 2, 2) })
			fill(c, func(int) float32 {
				x := math.Ldexp(1, 20+r.IntN(7))
				if r.IntN(2) == 0 {
					x = -x
				}
				return float32(x) + float32(r.IntN(5)-2)
			})
		case "zerohuge":
			lo, hi, big := -30, -20, 100
			if md.Format == MMAFP16 {
				lo, hi, big = -14, -8, 10
			}
			fill(a, func(int) float32 { return g.val(lo, hi, 0) })
			fill(b, func(int) float32 { return g.val(lo, hi, 0) })
			for k := 0; k < md.K; k++ {
				if r.IntN(4) != 0 {
					continue
				}
				z := float32(0)
				if r.IntN(2) == 0 {
					z = float32(math.Copysign(0, -1))
				}
				for i := 0; i < md.M; i++ {
					a[i*md.K+k] = z
				}
				for j := 0; j < md.N; j++ {
					b[k*md.N+j] = g.val(big, g.maxExp(), 0)
				}
			}
			fill(c, func(int) float32 {
				if r.IntN(2) == 0 {
					return float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
				}
				return accF32(r, 2*lo, 2*hi)
			})
		case "specials":
			fill(a, func(int) float32 { return g.special() })
			fill(b, func(int) float32 { return g.special() })
			fill(c, func(int) float32 {
				if r.IntN(2) == 0 {
					return float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
				}
				return accF32(r, -3, 3)
			})
		}
		tiles[t] = tcTile{Class: cls, A: a, B: b, C: c}
	}
	return tiles
}

// encodeInputs writes tiles as the probe reads them: per tile A, B (u16
// bits for bf16 and fp16, u32 for tf32), then C (u32), little-endian.
func encodeInputs(md tcMode, tiles []tcTile) []byte {
	var out []byte
	put := func(xs []float32) {
		d := mmaDType(md.Format)
		for _, x := range xs {
			if d == FP32 {
				out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
			} else {
				out = binary.LittleEndian.AppendUint16(out, uint16(ToBits(d, x)))
			}
		}
	}
	for _, t := range tiles {
		put(t.A)
		put(t.B)
		for _, x := range t.C {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
		}
	}
	return out
}

// modelTile computes D of one tile with the H200 model of md's format.
func modelTile(md tcMode, tc TensorCore, t tcTile, d []float32) {
	a := make([]float32, md.K)
	b := make([]float32, md.K)
	for i := 0; i < md.M; i++ {
		for j := 0; j < md.N; j++ {
			for k := 0; k < md.K; k++ {
				a[k] = t.A[i*md.K+k]
				b[k] = t.B[k*md.N+j]
			}
			d[i*md.N+j] = tc.DotAdd(a, b, t.C[i*md.N+j])
		}
	}
}

func (md tcMode) String() string { return fmt.Sprintf("%s (m%dn%dk%d)", md.Name, md.M, md.N, md.K) }
