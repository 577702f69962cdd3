package power

import (
	"fmt"
	"math"
	"slices"

	"github.com/bitparity/bitparity/oracle"
)

// GEMMSchedules is gemm's schedules for inputs of dtype in, in the
// canonical order explain.Space lists them (and searches them):
//
//	{fma chain, TensorCore(in)} x K tile {none, 64, 128} x split-K 1..64
//	x combine sequential, and tree for powers of two > 1            (420)
//
// The one place this space is decided: a gemm family (NewFamily) is it
// without the schedules that run the same operations at the family's K.
func GEMMSchedules(in oracle.DType) []oracle.GEMMSchedule {
	var out []oracle.GEMMSchedule
	for _, m := range []oracle.MMAFormat{oracle.MMANone, TensorCore(in)} {
		for _, kt := range []int{0, 64, 128} {
			for s := 1; s <= 64; s++ {
				out = append(out, oracle.GEMMSchedule{SplitK: s, Combine: oracle.CrossSequential, MMA: m, KTile: kt})
				if s > 1 && s&(s-1) == 0 {
					out = append(out, oracle.GEMMSchedule{SplitK: s, Combine: oracle.CrossTree, MMA: m, KTile: kt})
				}
			}
		}
	}
	return out
}

// TensorCore is the tensor-core format a gemm of inputs of dtype in runs
// on: bf16 and fp16 their own, fp32 tf32.
func TensorCore(in oracle.DType) oracle.MMAFormat {
	switch in {
	case oracle.BF16:
		return oracle.MMABF16
	case oracle.FP16:
		return oracle.MMAFP16
	}
	return oracle.MMATF32
}

// gemmKey is equal for two gemm schedules that run the same operations on
// a row of K values: the chunk length (at most K) and the tensor core
// decide the partials; chunks past the last nonempty one are +0, which a
// sequential combine adds without changing a nonzero sum (a sum of -0
// would become +0: a row whose every product is zero, which no drawn row
// is), so a sequential combine is keyed by the chunk alone; so is a tree
// over at most 2 nonempty chunks (p0 + p1 either way); any other tree by
// its split-K too.
func gemmKey(s oracle.GEMMSchedule, K int) string {
	chunk := min(s.Chunk(K), K)
	parts := (K + chunk - 1) / chunk
	if s.Combine == oracle.CrossSequential || parts <= 2 {
		return fmt.Sprintf("chunk %d seq %s", chunk, s.MMA)
	}
	return fmt.Sprintf("chunk %d tree %d %s", chunk, s.SplitK, s.MMA)
}

// GEMM returns the alternatives that one output of a gemm row shows: x
// is the row (K values), w the output's column of W (K values); a is in
// the set when y = Σ_k x[k]·w[k], rounded to out, has other bits under
// f.Alts[a] than under f.Declared (GEMMCheck.Shows on a copy of x). A
// row shows at least the alternatives any of its outputs shows: measured
// on some of its columns, a set is a lower bound of the row's.
func (f *Family) GEMM(x, w []float32, out oracle.DType) (Set, error) {
	c, err := f.NewGEMMCheck(slices.Clone(x), w, out)
	if err != nil {
		return nil, err
	}
	return c.Shows(), nil
}

// GEMMCheck tells which alternatives of a gemm family one output of a
// row shows while single elements of the row change (a search over a
// knob's values): it keeps one oracle.GEMMProbe per schedule, so a change
// of x[k] costs each fma-chain schedule the rest of k's chunk and each
// tensor-core schedule k's chunk, and each schedule a combine.
type GEMMCheck struct {
	f      *Family
	out    oracle.DType
	decl   *oracle.GEMMProbe
	probes []*oracle.GEMMProbe // alternative a's
}

// NewGEMMCheck starts a check of row x against column w (x: the caller's
// slice, which Set writes; the caller must not change it otherwise).
func (f *Family) NewGEMMCheck(x, w []float32, out oracle.DType) (*GEMMCheck, error) {
	d, ok := f.Declared.(oracle.GEMMSchedule)
	if !ok {
		return nil, fmt.Errorf("power: gemm check of a %s family", f.Op)
	}
	if len(x) != f.Cols {
		return nil, fmt.Errorf("power: gemm row of %d values for a family at K %d", len(x), f.Cols)
	}
	c := &GEMMCheck{f: f, out: out, probes: make([]*oracle.GEMMProbe, len(f.Alts))}
	var err error
	if c.decl, err = oracle.NewGEMMProbe(x, w, d); err != nil {
		return nil, fmt.Errorf("power: gemm %s: %w", d, err)
	}
	for a, alt := range f.Alts {
		if c.probes[a], err = oracle.NewGEMMProbe(x, w, alt.(oracle.GEMMSchedule)); err != nil {
			return nil, fmt.Errorf("power: gemm %s: %w", alt, err)
		}
	}
	return c, nil
}

// Set stores v in x[k].
func (c *GEMMCheck) Set(k int, v float32) {
	c.decl.Set(k, v)
	for _, p := range c.probes {
		p.Set(k, v)
	}
}

// Shows returns the alternatives the output shows now.
func (c *GEMMCheck) Shows() Set {
	ref := math.Float32bits(oracle.Round(c.out, c.decl.Y()))
	s := NewSet(len(c.probes))
	for a, p := range c.probes {
		if math.Float32bits(oracle.Round(c.out, p.Y())) != ref {
			s.Add(a)
		}
	}
	return s
}
