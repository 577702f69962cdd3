package inputs

import (
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/ops/gemm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/values"
)

// The token ops (rmsnorm, gemm, logprob) have one row per item: a row of
// x (or of logits) per token, and tensors every row shares (the weights),
// or one value per token (log-prob's target id). Their recipe, for the
// case's generator version, is their op package's (ops.CaseOp.Tensors and
// FromSeed):
//
//	rmsnorm  x: tensor x, the case's dist, σ 1, row key = item;
//	         w: tensor w, normal, σ 0.25, row 0, then round(1 + w)
//	gemm     x: tensor x, the case's dist, σ 1, row key = item;
//	         W: tensor w, normal, σ 1/sqrt(K), row key = k (K rows of N)
//	logprob  logits: tensor logits, the case's dist, σ 3, row key = item;
//	         target of item i: the first draw of version 1's stream of
//	         (seed, tensor targets, i), mod vocab

// itemTensor returns the recipe of a token op's per-item tensor.
func itemTensor(c spec.Case) target.ItemTensor {
	k, ok := all.Case(c.Op)
	if !ok || !k.Token() {
		panic(fmt.Sprintf("fuzz: op %s is not a token op", c.Op))
	}
	return target.ItemTensor(k.Tensors(c)[0])
}

// tokenInputs sets b's Input for token-op case c with len(ids) items,
// item i being the case's item ids[i] (nil ids: the case's own rows): the
// sizes, after the shape and memory-budget checks, the shared weights
// (like's when like is not nil: a batch of the same case), and, unless
// lazy, the per-item tensor. Boundary nudging is the caller's.
func tokenInputs(c spec.Case, b *target.Batch, ids []int, lazy bool, like *target.Batch) error {
	k, ok := all.Case(c.Op)
	if !ok || !k.Token() {
		return fmt.Errorf("op %s is not a token op", c.Op)
	}
	var l ops.In
	if like != nil {
		_, in, err := like.Kind()
		if err != nil {
			return err
		}
		l = in
	}
	return seededInputs(k, c, b, ids, lazy, l)
}

// seededInputs sets b's Input (b has sizes and dtypes only) to op k's
// input of case c from its seed (ops.CaseOp.FromSeed), with len(ids)
// items (nil ids: the case's own), the per-item tensors nil when lazy.
func seededInputs(k ops.CaseOp, c spec.Case, b *target.Batch, ids []int, lazy bool, like ops.In) error {
	x, err := k.FromSeed(c, b.In, b.Out, seeded{c: c, dt: b.In, ids: ids, lazy: lazy}, like)
	if err != nil {
		return err
	}
	*b = *b.With(x)
	return nil
}

// seeded is the generator a case's op package makes its input with
// (ops.Seeded): fill for the case's generator version, items ids (nil:
// the case's own BatchRows items). A lazy one makes no per-item tensor;
// one for sizes only (Check) makes no tensor at all.
type seeded struct {
	c         spec.Case
	dt        oracle.DType
	ids       []int
	lazy      bool
	sizesOnly bool
}

func (s seeded) Items() int {
	if s.ids == nil {
		return s.c.BatchRows()
	}
	return len(s.ids)
}

func (s seeded) Item(i int) uint64 {
	if s.ids == nil {
		return uint64(i)
	}
	return uint64(s.ids[i])
}

func (s seeded) Filler(i int) bool { return s.ids != nil && s.ids[i] == target.FillerItem }

func (s seeded) PerItem(t ops.Tensor, rows, cols int, key func(r int) uint64) ([]float32, error) {
	if s.lazy {
		return nil, nil
	}
	return fill(s.c, t.ID, t.Dist, s.dt, t.Scale, rows, cols, key)
}

func (s seeded) Shared(t ops.Tensor, rows, cols int) ([]float32, error) {
	if s.sizesOnly {
		return nil, nil
	}
	return fill(s.c, t.ID, t.Dist, s.dt, t.Scale, rows, cols, nil)
}

func (s seeded) First(tensor, key uint64) uint64 { return newRowRNG(s.c.Seed, tensor, key).next() }
func (seeded) Positive(name string, v int) error { return positive(name, v) }
func (s seeded) Budget(counts ...int) error      { return Budget(s.c, counts...) }

// GEMMTensors returns the recipes of gemm case c's tensors for a device
// that makes them itself by generator version 2 (gpu.HoldGEMMCase): x,
// the case's Rows rows of K values, row i keyed i (a boundary case's
// rows generated as normal, then nudged as nudgeBoundary nudges them), and
// w, K rows of N values, row k keyed k (gemm.Weights). Of(c) makes
// the same bits on the host. The shape and memory budget are checked as
// Of checks them; a case of another op or generator version, with
// explicit data, or of the sensitive distribution (its rows are chosen on
// the host) is refused with an error wrapping target.ErrUnsupported.
func GEMMTensors(c spec.Case) (x, w values.Tensor, err error) {
	if c.Op != (gemm.Op{}).Name() || c.GenVersion != 2 || c.Data != nil || c.Dist == spec.DistSensitive {
		return x, w, fmt.Errorf("gemm tensors of a %s case, generator version %d (data %t, dist %q): %w",
			c.Op, c.GenVersion, c.Data != nil, c.Dist, target.ErrUnsupported)
	}
	in, _, err := caseDTypes(c)
	if err != nil {
		return x, w, err
	}
	s := c.Shape
	if err := ops.FirstErr(positive("rows", s.Rows), positive("hidden (K)", s.Hidden), positive("n", s.N),
		Budget(c, spec.SatMul(s.Rows, s.Hidden), spec.SatMul(s.Hidden, s.N))); err != nil {
		return x, w, err
	}
	rt, wt := itemTensor(c), gemm.Weights(s)
	x = values.Tensor{Seed: c.Seed, ID: rt.ID, Dist: rt.Dist, DType: in, Scale: rt.Scale}
	w = values.Tensor{Seed: c.Seed, ID: wt.ID, Dist: wt.Dist, DType: in, Scale: wt.Scale}
	return x, w, nil
}
