package gen

import (
	"slices"

	"github.com/bitparity/bitparity/spec"
)

// Dim is one integer dimension of a case that shrinking reduces.
type Dim struct {
	// Name is the dimension as users read it: rows, hidden, n, vocab, kv,
	// seq_len, seqs, head_dim, kv_heads, group (heads per kv head), batch,
	// pad, row, position.
	Name string
	// Get returns the dimension's value in c.
	Get func(c spec.Case) int
	// Set returns c with the dimension set to v and the fields that depend
	// on it repaired (Row and Position kept inside the batch, Mask and
	// KVLens cut to the rows); ok is false when no valid case has that
	// value (spec.Case.Validate decides the rest).
	Set func(c spec.Case, v int) (out spec.Case, ok bool)
	// Min is the smallest value Set may be given.
	Min func(c spec.Case) int
	// Interesting returns the values below v that shrinking tries first,
	// ascending.
	Interesting func(c spec.Case, v int) []int
	// Inner is true for the sizes a model fixes (hidden, n, vocab,
	// head_dim, group, kv_heads), false for the batch and sequence
	// dimensions and relation parameters a serving engine varies (rows,
	// seqs, kv, seq_len, kv_lens, batch, pad, position, row): a shrink
	// that holds a model profile (shrink.Options.HoldInner) leaves the
	// inner ones.
	Inner bool
}

// Dims returns the shrinkable dimensions of c's op and relation in the
// order shrinking visits them: the batch dimension (rows or seqs), the
// relation's other batch (batch or pad), the per-row dimensions (hidden,
// n, vocab, kv, seq_len, head_dim, group, kv_heads), kv_lens, then the
// watched position and row. Rows come first because they are what a
// drift's onset is about; a smaller hidden found first could hide the
// drift from all but a few rows and pin the row count high.
func Dims(c spec.Case) []Dim {
	one := func(spec.Case) int { return 1 }
	zero := func(spec.Case) int { return 0 }
	o, _ := c.Op.Info()
	has := func(d spec.Dim) bool {
		return slices.ContainsFunc(o.Reads, func(r spec.Dim) bool { return r.Name == d.Name })
	}
	var ds []Dim
	// the per-row dimensions the op reads (its record's Reads), the head
	// dimensions apart
	for _, d := range o.Reads {
		switch d.Name {
		case o.Batch.Name, spec.DimHeads.Name, spec.DimKVHeads.Name, spec.DimHeadDim.Name:
			continue
		}
		interesting, inner := interestingPow2, true
		if d.Name == spec.DimKV.Name || d.Name == spec.DimSeqLen.Name {
			interesting, inner = interestingKV, false // sequence dimensions
		}
		ds = append(ds, Dim{Name: d.Name, Inner: inner,
			Get: func(c spec.Case) int { return d.Get(c.Shape) },
			Set: func(c spec.Case, v int) (spec.Case, bool) {
				c = clone(c)
				d.Set(&c.Shape, v)
				return c, c.Dist != spec.DistSensitive || sensitiveCols(c)
			},
			Min:         one,
			Interesting: func(c spec.Case, v int) []int { return interesting(1, v) },
		})
	}
	if has(spec.DimHeads) {
		ds = append(ds,
			Dim{Name: "head_dim", Inner: true,
				Get: func(c spec.Case) int { return c.Shape.HeadDim },
				Set: func(c spec.Case, v int) (spec.Case, bool) {
					c = clone(c)
					c.Shape.HeadDim = v
					return c, true
				},
				Min: func(spec.Case) int { return headDims[0] },
				Interesting: func(c spec.Case, v int) []int {
					return slices.DeleteFunc(slices.Clone(headDims), func(d int) bool { return d >= v })
				},
			},
			Dim{Name: "group", Inner: true,
				Get: func(c spec.Case) int { return c.Shape.Heads / c.Shape.KVHeads },
				Set: func(c spec.Case, v int) (spec.Case, bool) {
					c = clone(c)
					c.Shape.Heads = c.Shape.KVHeads * v
					return c, true
				},
				Min:         one,
				Interesting: func(c spec.Case, v int) []int { return interestingPow2(1, v) },
			},
			Dim{Name: "kv_heads", Inner: true,
				Get: func(c spec.Case) int { return c.Shape.KVHeads },
				Set: func(c spec.Case, v int) (spec.Case, bool) {
					c = clone(c)
					g := c.Shape.Heads / c.Shape.KVHeads
					c.Shape.KVHeads = v
					c.Shape.Heads = v * g
					return c, true
				},
				Min:         one,
				Interesting: func(c spec.Case, v int) []int { return interestingPow2(1, v) },
			})
	}
	ds = append(ds, Dim{Name: o.Batch.Name,
		Get: spec.Case.BatchRows,
		Set: func(c spec.Case, v int) (spec.Case, bool) {
			c = clone(c)
			c.SetBatchRows(v)
			c.Rel.Row = min(c.Rel.Row, v-1)
			if len(c.Shape.KVLens) > v {
				c.Shape.KVLens = c.Shape.KVLens[:v]
			}
			if len(c.Rel.Mask) > 0 {
				c.Rel.Mask = slices.DeleteFunc(c.Rel.Mask, func(m int) bool { return m >= v })
				if len(c.Rel.Mask) == 0 {
					return c, false // an empty mask would mean every row
				}
			}
			return c, true
		},
		Min:         one,
		Interesting: func(c spec.Case, v int) []int { return interestingRows(1, v) },
	})
	if len(c.Shape.KVLens) > 0 {
		for i := range c.Shape.KVLens {
			ds = append(ds, fieldDim("kv_lens", func(c *spec.Case) *int { return &c.Shape.KVLens[i] }, one,
				func(c spec.Case, v int) []int { return interestingKV(1, v) }))
		}
	}
	switch c.Relation {
	case spec.RelBatchInvariance:
		ds = append(ds,
			Dim{Name: "batch",
				Get: func(c spec.Case) int { return c.Rel.Batch },
				Set: func(c spec.Case, v int) (spec.Case, bool) {
					c = clone(c)
					c.Rel.Batch = v
					c.Rel.Position = min(c.Rel.Position, v-1)
					return c, true
				},
				Min:         one,
				Interesting: func(c spec.Case, v int) []int { return interestingRows(1, v) },
			},
			fieldDim("position", func(c *spec.Case) *int { return &c.Rel.Position }, zero,
				func(c spec.Case, v int) []int { return interestingIndex(v) }))
	case spec.RelPadding:
		ds = append(ds, fieldDim("pad", func(c *spec.Case) *int { return &c.Rel.Pad },
			func(c spec.Case) int { return c.BatchRows() + 1 },
			func(c spec.Case, v int) []int { return interestingRows(c.BatchRows()+1, v) }))
	}
	ds = append(ds, fieldDim("row", func(c *spec.Case) *int { return &c.Rel.Row }, zero,
		func(c spec.Case, v int) []int { return interestingIndex(v) }))
	rank := func(d Dim) int {
		switch d.Name {
		case "rows", "seqs":
			return 0
		case "batch", "pad":
			return 1
		case "kv_lens":
			return 3
		case "position", "row":
			return 4
		}
		return 2
	}
	slices.SortStableFunc(ds, func(a, b Dim) int { return rank(a) - rank(b) })
	return ds
}

// interestingPow2 returns lo..8, powers of two and their neighbours, and
// the multiples of 64 and 32 nearest below `below`, ascending, in
// [lo, below).
func interestingPow2(lo, below int) []int {
	c := candidates{lo: lo, below: below}
	c.small()
	c.pow2()
	for _, m := range []int{32, 64} {
		c.add((below - 1) / m * m)
	}
	return c.values()
}

// interestingIndex returns 0, 1, v/2 and v-1 below v, ascending.
func interestingIndex(v int) []int {
	return sortedUnique(slices.DeleteFunc([]int{0, 1, v / 2, v - 1}, func(x int) bool { return x < 0 || x >= v }))
}

// Candidates returns the values dimension d tries below its value in c, in
// the order a greedy shrinker tries them: ascending, from d.Min through the
// interesting values, v/2 and v-1, each once and each in [d.Min, v).
func Candidates(d Dim, c spec.Case) []int {
	v := d.Get(c)
	lo := d.Min(c)
	s := append([]int{lo, v / 2, v - 1}, d.Interesting(c, v)...)
	return sortedUnique(slices.DeleteFunc(s, func(x int) bool { return x < lo || x >= v }))
}

// Simplifications returns the non-numeric simplifications of c, each a
// valid case differing from c in one part: Dist -> normal, the filler ->
// a simpler one (zeros, copy, normal, huge, nan), PermSeed -> 0, Mask ->
// none, KVLens -> none (every request at KV), Seed -> 0.
func Simplifications(c spec.Case) []spec.Case {
	var out []spec.Case
	try := func(f func(*spec.Case)) {
		n := clone(c)
		f(&n)
		if n.Validate() == nil {
			out = append(out, n)
		}
	}
	if c.Dist != spec.DistNormal {
		try(func(n *spec.Case) { n.Dist = spec.DistNormal })
	}
	if i := slices.Index(spec.Fillers, spec.Filler(c.Rel.Filler)); i > 0 {
		for _, f := range spec.Fillers[:i] {
			try(func(n *spec.Case) { n.Rel.Filler = string(f) })
		}
	}
	if c.Rel.PermSeed != 0 {
		try(func(n *spec.Case) { n.Rel.PermSeed = 0 })
	}
	if len(c.Rel.Mask) > 0 {
		try(func(n *spec.Case) { n.Rel.Mask = nil })
	}
	if len(c.Shape.KVLens) > 0 {
		try(func(n *spec.Case) {
			n.Shape.KV = slices.Max(n.Shape.KVLens)
			n.Shape.KVLens = nil
		})
	}
	if c.Seed != 0 {
		try(func(n *spec.Case) { n.Seed = 0 })
	}
	return out
}

// Simpler returns every valid one-step simplification of c: for each
// dimension of Dims(c) in order, the case with that dimension at each of
// its Candidates, then Simplifications(c). Each is strictly smaller than c
// in one dimension (or simpler in one part) and no larger in any other, so
// repeated shrinking ends.
func Simpler(c spec.Case) []spec.Case {
	var out []spec.Case
	for _, d := range Dims(c) {
		for _, v := range Candidates(d, c) {
			if n, ok := d.Set(c, v); ok && n.Validate() == nil {
				out = append(out, n)
			}
		}
	}
	return append(out, Simplifications(c)...)
}

// clone returns c with its slices copied, so that a candidate never
// aliases the case it came from.
// fieldDim is the Dim name of the int of a case that at points to: Get
// reads it; Set writes v to it in a clone (ok always).
func fieldDim(name string, at func(c *spec.Case) *int, min func(spec.Case) int, interesting func(c spec.Case, v int) []int) Dim {
	return Dim{Name: name,
		Get: func(c spec.Case) int { return *at(&c) },
		Set: func(c spec.Case, v int) (spec.Case, bool) {
			c = clone(c)
			*at(&c) = v
			return c, true
		},
		Min:         min,
		Interesting: interesting,
	}
}

func clone(c spec.Case) spec.Case {
	c.Targets = slices.Clone(c.Targets)
	c.Shape.KVLens = slices.Clone(c.Shape.KVLens)
	c.Rel.Mask = slices.Clone(c.Rel.Mask)
	return c
}
