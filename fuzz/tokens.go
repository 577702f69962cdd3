package fuzz

import (
	"fmt"
	"math"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/values"
)

// The token ops (rmsnorm, gemm, logprob) have one row per item: a row of
// x (or of logits) per token, and tensors every row shares (the weights),
// or one value per token (log-prob's target id). Their recipe, for the
// case's generator version:
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
	switch c.Op {
	case spec.OpLogProb:
		return target.ItemTensor{ID: tensorLogits, Dist: c.Dist, Scale: 3}
	default:
		return target.ItemTensor{ID: tensorX, Dist: c.Dist, Scale: 1}
	}
}

// weights returns the tensor the items of rmsnorm or gemm case c share
// (w, W): like's when like is a batch of the same case, else made by the
// recipe above.
func weights(c spec.Case, in oracle.DType, like *target.Batch) ([]float32, error) {
	s := c.Shape
	switch {
	case like != nil && c.Op == spec.OpRMSNorm:
		return like.RMSNorm.W, nil
	case like != nil:
		return like.GEMM.W, nil
	case c.Op == spec.OpRMSNorm:
		w, err := fill(c, tensorW, spec.DistNormal, in, 0.25, 1, s.Hidden, nil)
		for i := range w {
			w[i] = oracle.Round(in, 1+w[i])
		}
		return w, err
	}
	w := gemmWeights(c, in)
	return fill(c, w.ID, w.Dist, in, w.Scale, s.Hidden, s.N, nil)
}

// gemmWeights is the recipe of gemm case c's W (input dtype in).
func gemmWeights(c spec.Case, in oracle.DType) values.Tensor {
	return values.Tensor{Seed: c.Seed, ID: tensorW, Dist: spec.DistNormal, DType: in, Scale: 1 / math.Sqrt(float64(c.Shape.Hidden))}
}

// GEMMTensors returns the recipes of gemm case c's tensors for a device
// that makes them itself by generator version 2 (gpu.HoldGEMMCase): x,
// the case's Rows rows of K values, row i keyed i (a boundary case's
// rows generated as normal, then nudged as nudgeBoundary nudges them), and
// w, K rows of N values, row k keyed k. Inputs(c) makes the same bits on
// the host. The shape and memory budget are checked as Inputs checks
// them; a case of another op or generator version, with explicit data, or
// of the sensitive distribution (its rows are chosen on the host) is
// refused with an error wrapping target.ErrUnsupported.
func GEMMTensors(c spec.Case) (x, w values.Tensor, err error) {
	if c.Op != spec.OpGEMM || c.GenVersion != 2 || c.Data != nil || c.Dist == spec.DistSensitive {
		return x, w, fmt.Errorf("gemm tensors of a %s case, generator version %d (data %t, dist %q): %w",
			c.Op, c.GenVersion, c.Data != nil, c.Dist, target.ErrUnsupported)
	}
	in, _, err := caseDTypes(c)
	if err != nil {
		return x, w, err
	}
	s := c.Shape
	n := s.Rows
	if err := firstErr(positive("rows", n), positive("hidden (K)", s.Hidden), positive("n", s.N),
		budget(c, spec.SatMul(n, s.Hidden), spec.SatMul(s.Hidden, s.N))); err != nil {
		return x, w, err
	}
	rt := itemTensor(c)
	x = values.Tensor{Seed: c.Seed, ID: rt.ID, Dist: rt.Dist, DType: in, Scale: rt.Scale}
	return x, gemmWeights(c, in), nil
}

// tokenInputs sets b's op field for token-op case c with len(ids) items,
// item i being the case's item ids[i] (nil ids: the case's own rows): the
// sizes, after the shape and memory-budget checks, the shared weights
// (like's when like is not nil: a batch of the same case), and, unless
// lazy, the per-item tensor. Boundary nudging is the caller's.
func tokenInputs(c spec.Case, b *target.Batch, ids []int, lazy bool, like *target.Batch) error {
	s := c.Shape
	n := s.Rows
	var key func(i int) uint64
	if ids != nil {
		n = len(ids)
		key = func(i int) uint64 { return uint64(ids[i]) }
	}
	in := b.In
	rt := itemTensor(c)
	items := func(cols int) ([]float32, error) {
		if lazy {
			return nil, nil
		}
		return fill(c, rt.ID, rt.Dist, in, rt.Scale, n, cols, key)
	}
	// itemsAndWeights: the per-item tensor (cols wide) and the shared
	// weights of rmsnorm and gemm.
	itemsAndWeights := func(cols int) (x, w []float32, err error) {
		if x, err = items(cols); err != nil {
			return nil, nil, err
		}
		w, err = weights(c, in, like)
		return x, w, err
	}
	switch c.Op {
	case spec.OpRMSNorm:
		if err := firstErr(positive("rows", n), positive("hidden", s.Hidden), budget(c, spec.SatMul(n, s.Hidden), s.Hidden)); err != nil {
			return err
		}
		x, w, err := itemsAndWeights(s.Hidden)
		if err != nil {
			return err
		}
		b.RMSNorm = &oracle.RMSNormInput{X: x, W: w, Rows: n, Hidden: s.Hidden, Eps: c.Eps, Out: b.Out}
	case spec.OpGEMM:
		if err := firstErr(positive("rows", n), positive("hidden (K)", s.Hidden), positive("n", s.N),
			budget(c, spec.SatMul(n, s.Hidden), spec.SatMul(s.Hidden, s.N))); err != nil {
			return err
		}
		x, w, err := itemsAndWeights(s.Hidden)
		if err != nil {
			return err
		}
		b.GEMM = &oracle.GEMMInput{X: x, W: w, M: n, K: s.Hidden, N: s.N, Out: b.Out}
	case spec.OpLogProb:
		if err := firstErr(positive("rows", n), positive("vocab", s.Vocab), budget(c, spec.SatMul(n, s.Vocab))); err != nil {
			return err
		}
		x, err := items(s.Vocab)
		if err != nil {
			return err
		}
		t := make([]int32, n)
		for i := range t {
			k := uint64(i)
			if key != nil {
				if ids[i] == target.FillerItem {
					continue // a filler row's target is 0 (padded)
				}
				k = key(i)
			}
			t[i] = int32(newRowRNG(c.Seed, tensorTargets, k).next() % uint64(s.Vocab))
		}
		b.LogProb = &oracle.LogProbInput{Logits: x, Targets: t, Rows: n, Vocab: s.Vocab}
	default:
		return fmt.Errorf("op %s is not a token op", c.Op)
	}
	return nil
}
