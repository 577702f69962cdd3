package gen

import (
	"math/rand"
	"slices"
)

// Named row counts where real kernels were seen to switch paths: 928 and
// 2274 rows gave different RMSNorm bits (the seed's bug); decode batches are
// padded to the CUDA-graph size 4548.
var namedRows = []int{928, 2274, 4548}

// smSM is the number of SMs of an H200: grid sizes that are multiples of it
// fill the machine exactly, so schedulers often switch there.
const smCount = 132

// tileEdges are KV tile sizes of attention kernels (FlashAttention
// generations use 16..128 token tiles; 48 vs 64 is the known mismatch).
var tileEdges = []int{16, 32, 48, 64, 128}

// headDims are the head dimensions attention kernels are built for.
var headDims = []int{64, 128, 256}

// vocabs are vocabulary sizes of common models (GPT-2, Llama 2, Llama 3,
// Qwen 2), drawn beside powers of two and small values.
var vocabs = []int{50257, 32000, 128256, 151936, 152064}

// epsilons are the RMSNorm eps values of common models.
var epsilons = []float32{1e-5, 1e-6, 1e-12, 1e-8}

// clampDraw retries draw up to 8 times for a value in [1, max] and falls
// back to a uniform value in [1, max].
func clampDraw(r *rand.Rand, max int, draw func() int) int {
	if max < 1 {
		max = 1
	}
	for i := 0; i < 8; i++ {
		if v := draw(); v >= 1 && v <= max {
			return v
		}
	}
	return 1 + r.Intn(max)
}

// pick returns one element of s.
func pick[T any](r *rand.Rand, s []T) T { return s[r.Intn(len(s))] }

// drawRows draws a row (token, request or batch) count in [1, max], biased:
//
//	25% 1
//	20% a power of two 2^k (k <= 13) plus -1, 0 or +1
//	20% a multiple of 32 or 64 plus -3..+3
//	10% one of 928, 2274, 4548
//	10% a multiple of 132 (H200 SMs) plus -1, 0 or +1
//	15% uniform in [1, max]
func drawRows(r *rand.Rand, max int) int {
	return clampDraw(r, max, func() int {
		switch p := r.Intn(100); {
		case p < 25:
			return 1
		case p < 45:
			return 1<<r.Intn(14) + r.Intn(3) - 1
		case p < 65:
			m := 32 << r.Intn(2)
			if max < m {
				return 1 + r.Intn(max)
			}
			return m*(1+r.Intn(max/m)) + r.Intn(7) - 3
		case p < 75:
			return pick(r, namedRows)
		case p < 85:
			if max < smCount {
				return 1 + r.Intn(max)
			}
			return smCount*(1+r.Intn(max/smCount)) + r.Intn(3) - 1
		default:
			return 1 + r.Intn(max)
		}
	})
}

// drawHidden draws a hidden (reduction) size in [min(64, max), max], biased:
//
//	50% a power of two in 64..8192
//	20% a multiple of 64
//	15% a power of two -1 or +1 (vector-width edges)
//	15% uniform in [64, max]
func drawHidden(r *rand.Rand, max int) int {
	lo := 64
	if max < lo {
		return 1 + r.Intn(max)
	}
	return clampDraw(r, max, func() int {
		switch p := r.Intn(100); {
		case p < 50:
			return 64 << r.Intn(8)
		case p < 70:
			return 64 * (1 + r.Intn(max/64))
		case p < 85:
			return 64<<r.Intn(8) + 2*r.Intn(2) - 1
		default:
			return lo + r.Intn(max-lo+1)
		}
	})
}

// drawKV draws a KV or sequence length in [1, max], biased to tile edges:
//
//	15% 1..8
//	30% a multiple of a tile size (16, 32, 48, 64, 128) plus -1, 0 or +1
//	15% just past 48: 49, 50, 97 or 48k+1
//	15% a power of two plus -1, 0 or +1
//	25% uniform in [1, max]
func drawKV(r *rand.Rand, max int) int {
	return clampDraw(r, max, func() int {
		switch p := r.Intn(100); {
		case p < 15:
			return 1 + r.Intn(8)
		case p < 45:
			t := pick(r, tileEdges)
			if max < t {
				return 1 + r.Intn(max)
			}
			return t*(1+r.Intn(max/t)) + r.Intn(3) - 1
		case p < 60:
			switch r.Intn(4) {
			case 0:
				return 49
			case 1:
				return 50
			case 2:
				return 97
			default:
				if max < 48 {
					return 49
				}
				return 48*(1+r.Intn(max/48)) + 1
			}
		case p < 75:
			return 1<<r.Intn(14) + r.Intn(3) - 1
		default:
			return 1 + r.Intn(max)
		}
	})
}

// drawVocab draws a vocabulary size in [2, max] (1 when max < 2):
// 30% a model's vocabulary, 30% a power of two, 20% small (2..1024),
// 20% uniform.
func drawVocab(r *rand.Rand, max int) int {
	if max < 2 {
		return 1
	}
	v := clampDraw(r, max, func() int {
		switch p := r.Intn(100); {
		case p < 30:
			return pick(r, vocabs)
		case p < 60:
			return 2 << r.Intn(17)
		case p < 80:
			return 2 + r.Intn(1023)
		default:
			return 2 + r.Intn(max-1)
		}
	})
	if v < 2 {
		v = 2
	}
	return v
}

// drawSmallPow2 draws 1, 2, 4 or 8 with weights 4:3:2:1.
func drawSmallPow2(r *rand.Rand) int {
	switch p := r.Intn(10); {
	case p < 4:
		return 1
	case p < 7:
		return 2
	case p < 9:
		return 4
	default:
		return 8
	}
}

// interestingRows returns the interesting row counts in [lo, below):
// lo..8, powers of two and their neighbours, the multiples of 32 and 64
// nearest below `below` and their neighbours (-3..+3), 928, 2274, 4548,
// below's residue r modulo 32, 64, 128 and 132 and r + the modulus,
// multiples of 132 by powers of two, and the largest multiple of 132 below;
// ascending, without duplicates.
func interestingRows(lo, below int) []int {
	c := candidates{lo: lo, below: below, s: interestingPow2(lo, below)}
	for _, m := range []int{32, 64} {
		for k := (below - 1) / m; k >= 1 && k >= (below-1)/m-1; k-- {
			for d := -3; d <= 3; d++ {
				c.add(k*m + d)
			}
		}
	}
	for _, v := range namedRows {
		c.add(v)
	}
	// the smallest values with below's residue modulo m (a periodic class
	// such as rows % 32 == 2 shrinks to 2 or 34 in one step)
	for _, m := range []int{32, 64, 128, smCount} {
		c.add(below % m)
		c.add(below%m + m)
	}
	for k := 1; smCount*k < below; k *= 2 {
		c.add(smCount * k)
	}
	c.add((below - 1) / smCount * smCount)
	return c.values()
}

// interestingKV returns the interesting KV lengths in [lo, below): lo..8,
// tile multiples and their neighbours up to 4 tiles, 49, 50, 97, below's
// residue r modulo each tile and r + the tile, powers of two and their
// neighbours, and the tile multiples nearest below `below`.
func interestingKV(lo, below int) []int {
	c := candidates{lo: lo, below: below}
	c.small()
	for _, t := range tileEdges {
		for k := 1; k <= 4; k++ {
			c.around(t * k)
		}
		c.around((below - 1) / t * t)
	}
	c.add(49, 50, 97)
	for _, t := range tileEdges {
		c.add(below%t, below%t+t)
	}
	c.pow2()
	return c.values()
}

// candidates gathers the values in [lo, below) a shrink tries first.
type candidates struct {
	lo, below int
	s         []int
}

// add keeps each of vs that is in [lo, below).
func (c *candidates) add(vs ...int) {
	for _, v := range vs {
		if v >= c.lo && v < c.below {
			c.s = append(c.s, v)
		}
	}
}

// around adds v-1, v and v+1.
func (c *candidates) around(v int) { c.add(v-1, v, v+1) }

// small adds lo..8.
func (c *candidates) small() {
	for v := c.lo; v <= 8; v++ {
		c.add(v)
	}
}

// pow2 adds the powers of two from 2 to the first at or past below-1,
// and their neighbours.
func (c *candidates) pow2() {
	for p := 2; p < c.below+2; p *= 2 {
		c.around(p)
	}
}

// values is what was added, ascending, without duplicates.
func (c *candidates) values() []int { return sortedUnique(c.s) }

func sortedUnique(s []int) []int {
	slices.Sort(s)
	return slices.Compact(s)
}
