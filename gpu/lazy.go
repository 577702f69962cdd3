//go:build cuda

package gpu

import (
	"fmt"

	"github.com/bitparity/bitparity/fuzz/values"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Generates reports whether t makes the values of batches from src on its
// device (target.Generator): cases of generator version 2 without
// explicit data, every distribution but boundary (whose nudge needs the
// oracle on the host), for the token ops (rmsnorm, gemm, logprob). The
// per-item tensor is made here; the shared ones (weights, target ids) come
// with the batch.
func (t *Target) Generates(src *target.Source) bool {
	c := src.Case
	switch c.Op {
	case spec.OpRMSNorm, spec.OpGEMM, spec.OpLogProb:
	default:
		return false
	}
	_, err := values.DistCode(src.Tensor.Dist)
	return c.Op == t.info.Op && c.Data == nil && c.GenVersion == 2 && c.Dist != spec.DistBoundary && err == nil
}

// itemInput puts the per-item tensor of b (cols values per item) on the
// device (under do) and returns it with the row selection of the output
// rows sel (rows: the caller's selection, nil for all). A batch with
// values is uploaded (vals) and selected by rowsel. A lazy batch's tensor
// is made here by gen_values, rows 0..top of the case's generator (top:
// its largest item), and output row j reads row Items[sel[j]]; rowOf maps
// a batch item to that row, for per-item side data (log-prob's targets).
func (d *Device) itemInput(b *target.Batch, vals []float32, cols int, rows, sel []int) (x, rs *buffer, rowOf func(i int) int, err error) {
	if !b.Lazy() {
		if x, err = d.upload(b.In, vals); err != nil {
			return nil, nil, nil, err
		}
		rs, err = d.rowsel(rows, sel)
		return x, rs, func(i int) int { return i }, err
	}
	src := b.Source
	top := b.Items() - 1
	for _, it := range src.Items {
		top = max(top, it)
	}
	rt := src.Tensor
	t := values.Tensor{Seed: src.Case.Seed, ID: rt.ID, Dist: rt.Dist, DType: b.In, Scale: rt.Scale}
	code, err := values.DistCode(rt.Dist)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generate %s: %w", b.Op, err)
	}
	if x, err = d.pool.get((top + 1) * cols * dsize(b.In)); err != nil {
		return nil, nil, nil, err
	}
	if err = d.launchGen(x, t, code, RowKeys{}, 0, top+1, cols); err != nil {
		d.pool.put(x)
		return nil, nil, nil, err
	}
	rowOf = func(i int) int { return int(src.Key(i)) }
	if src.Items == nil {
		rs, err = d.rowsel(rows, sel)
	} else {
		m := make([]int, len(sel))
		for j, r := range sel {
			m[j] = rowOf(r)
		}
		rs, err = d.uploadInts(m, false)
	}
	if err != nil {
		d.pool.put(x)
		return nil, nil, nil, err
	}
	return x, rs, rowOf, nil
}
