package gen

import (
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/spec"
)

// BatchRows returns the size of c's batch dimension, the dimension
// relations add, move and pad rows along: Shape.Seqs for attn_prefill,
// Shape.Rows for every other op.
func BatchRows(c spec.Case) int {
	if c.Op == spec.OpAttnPrefill {
		return c.Shape.Seqs
	}
	return c.Shape.Rows
}

func setBatchRows(c *spec.Case, n int) {
	if c.Op == spec.OpAttnPrefill {
		c.Shape.Seqs = n
		return
	}
	c.Shape.Rows = n
}

// perRow returns the input values one batch row of c needs, and the values
// shared by all rows (weights).
func perRow(c spec.Case) (row, shared int) {
	s := c.Shape
	switch c.Op {
	case spec.OpRMSNorm:
		return s.Hidden, s.Hidden
	case spec.OpGEMM:
		return satAdd(s.Hidden, s.N), satMul(s.Hidden, s.N)
	case spec.OpLogProb:
		return s.Vocab + 1, 0
	case spec.OpAttnPrefill:
		return satMul(s.SeqLen, satAdd(s.Heads, satMul(2, s.KVHeads)), s.HeadDim), 0
	case spec.OpAttnDecode:
		kv := s.KV
		for _, l := range s.KVLens {
			kv = max(kv, l)
		}
		return satMul(satAdd(s.Heads, satMul(2, kv, s.KVHeads)), s.HeadDim), 0
	}
	return 0, 0
}

// Elements returns an upper bound of the input values the relation of c
// materialises: per-row values times (BatchRows + Rel.Batch + Rel.Pad) plus
// the shared weights. Generators keep typical cases far below spec.MaxElements
// so that a campaign runs thousands of cases a minute.
func Elements(c spec.Case) int {
	row, shared := perRow(c)
	return satAdd(satMul(satAdd(BatchRows(c), c.Rel.Batch, c.Rel.Pad), row), shared)
}

// Valid reports whether c is a well-formed case of its op and relation:
// every dimension the op reads is >= 1 and every other one is zero, heads
// is a multiple of kv_heads, dtypes and the distribution are known, the
// relation parameters are in range (Row < BatchRows, 1 <= Batch,
// Position < Batch, Pad > BatchRows with a known Filler, Mask ascending
// within the rows) and Elements(c) <= spec.MaxElements. Generators and shrinkers
// only ever return valid cases.
func Valid(c spec.Case) error {
	s := c.Shape
	type dim struct {
		name string
		v    int
		used bool
	}
	var dims []dim
	switch c.Op {
	case spec.OpRMSNorm:
		dims = []dim{{"rows", s.Rows, true}, {"hidden", s.Hidden, true}}
	case spec.OpGEMM:
		dims = []dim{{"rows", s.Rows, true}, {"hidden", s.Hidden, true}, {"n", s.N, true}}
	case spec.OpLogProb:
		dims = []dim{{"rows", s.Rows, true}, {"vocab", s.Vocab, true}}
	case spec.OpAttnPrefill:
		dims = []dim{{"seqs", s.Seqs, true}, {"seq_len", s.SeqLen, true}, {"heads", s.Heads, true},
			{"kv_heads", s.KVHeads, true}, {"head_dim", s.HeadDim, true}}
	case spec.OpAttnDecode:
		dims = []dim{{"rows", s.Rows, true}, {"kv", s.KV, true}, {"heads", s.Heads, true},
			{"kv_heads", s.KVHeads, true}, {"head_dim", s.HeadDim, true}}
	default:
		return fmt.Errorf("unknown op %q", c.Op)
	}
	all := map[string]int{"rows": s.Rows, "hidden": s.Hidden, "n": s.N, "vocab": s.Vocab, "seqs": s.Seqs,
		"seq_len": s.SeqLen, "kv": s.KV, "heads": s.Heads, "kv_heads": s.KVHeads, "head_dim": s.HeadDim}
	for _, d := range dims {
		if d.v < 1 {
			return fmt.Errorf("%s: %s = %d, want >= 1", c.Op, d.name, d.v)
		}
		delete(all, d.name)
	}
	for name, v := range all {
		if v != 0 {
			return fmt.Errorf("%s: %s = %d, want 0 (the op does not read it)", c.Op, name, v)
		}
	}
	if len(s.KVLens) > 0 {
		if c.Op != spec.OpAttnDecode {
			return fmt.Errorf("%s: kv_lens set, only attn_decode reads it", c.Op)
		}
		for _, l := range s.KVLens {
			if l < 1 {
				return fmt.Errorf("attn_decode: kv_lens holds %d, want >= 1", l)
			}
		}
	}
	if s.KVHeads > 0 && s.Heads%s.KVHeads != 0 {
		return fmt.Errorf("%s: heads %d is not a multiple of kv_heads %d", c.Op, s.Heads, s.KVHeads)
	}
	for _, d := range []struct {
		name string
		dt   spec.DType
		opt  bool
	}{{"in", c.In, false}, {"out", c.Out, false}, {"compare", c.Compare, true}} {
		switch d.dt {
		case spec.BF16, spec.FP16, spec.FP32:
		case "":
			if !d.opt {
				return fmt.Errorf("%s dtype is empty", d.name)
			}
		default:
			return fmt.Errorf("unknown %s dtype %q", d.name, d.dt)
		}
	}
	if !slices.Contains(spec.Dists, c.Dist) {
		return fmt.Errorf("unknown value distribution %q", c.Dist)
	}
	if !slices.Contains(spec.Relations, c.Relation) {
		return fmt.Errorf("unknown relation %q", c.Relation)
	}
	if err := validRel(c); err != nil {
		return fmt.Errorf("%s: %w", c.Relation, err)
	}
	if e := Elements(c); e > spec.MaxElements {
		return fmt.Errorf("case needs %d input values, more than %d", e, spec.MaxElements)
	}
	return nil
}

func validRel(c spec.Case) error {
	p := c.Rel
	rows := BatchRows(c)
	if p.Row < 0 || p.Row >= rows {
		return fmt.Errorf("row %d outside the batch of %d", p.Row, rows)
	}
	if p.Batch < 0 || p.Position < 0 || p.Pad < 0 {
		return fmt.Errorf("negative relation parameter in %+v", p)
	}
	if c.Relation == spec.RelBatchInvariance {
		if p.Batch < 1 {
			return fmt.Errorf("batch %d, want >= 1", p.Batch)
		}
		if p.Position >= p.Batch {
			return fmt.Errorf("position %d outside the other batch of %d", p.Position, p.Batch)
		}
	} else if p.Batch != 0 || p.Position != 0 || p.PermSeed != 0 {
		return fmt.Errorf("batch, position and perm_seed belong to %s only", spec.RelBatchInvariance)
	}
	if c.Relation == spec.RelPadding {
		if p.Pad <= rows {
			return fmt.Errorf("pad %d, want more than the %d rows", p.Pad, rows)
		}
		if !slices.Contains(fillers, p.Filler) {
			return fmt.Errorf("unknown filler %q (want one of %v)", p.Filler, fillers)
		}
	} else if p.Pad != 0 || p.Filler != "" {
		return fmt.Errorf("pad and filler belong to %s only", spec.RelPadding)
	}
	if len(p.Mask) > 0 && c.Relation != spec.RelLogProbParity {
		return fmt.Errorf("mask belongs to %s only", spec.RelLogProbParity)
	}
	for i, m := range p.Mask {
		if m < 0 || m >= rows || (i > 0 && m <= p.Mask[i-1]) {
			return fmt.Errorf("mask %v is not ascending within [0,%d)", p.Mask, rows)
		}
	}
	return nil
}

// satLimit caps the size arithmetic of a case: shapes decoded from fuzz
// bytes or case files may hold absurd values whose products overflow int.
const satLimit = 1 << 62

// satMul is the product of non-negative xs, saturating at satLimit
// (a negative factor counts as satLimit: never a small, valid-looking size).
func satMul(xs ...int) int {
	p := 1
	for _, x := range xs {
		switch {
		case x < 0:
			return satLimit
		case x == 0:
			return 0
		case p > satLimit/x:
			return satLimit
		}
		p *= x
	}
	return p
}

// satAdd is the sum of xs, saturating at satLimit (negative terms count as
// satLimit).
func satAdd(xs ...int) int {
	s := 0
	for _, x := range xs {
		if x < 0 || s > satLimit-x {
			return satLimit
		}
		s += x
	}
	return s
}
