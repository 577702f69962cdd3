package gpu

import (
	"fmt"

	"github.com/bitparity/bitparity/target"
)

// A GPU attention target's held batch (Target.HoldAttention) keeps a
// draw's largest batch on the device as its kernels read it (q, k and v
// packed, decode's per-request cache offsets and lengths) and runs a step
// of items ids (requests or sequences) with no upload but the step's row
// selection: the kernels compute each selected row on its own, so the
// held batch's rows of the step's items (itemRows) are the step's rows,
// computed with the schedule the target's policy gives the step's own
// batch (attnStepBatch).

// attnStepBatch is the batch of items ids of held attention batch b as
// the target's policy sees a step: the op's View of them (a decode
// request's cache shared with b, not copied; prefill sequences copied),
// b's layout kept. The caller must not write to it.
func attnStepBatch(b *target.Batch, ids []int) (*target.Batch, error) {
	k, in, err := b.Kind()
	if err != nil {
		return nil, err
	}
	n := k.Items(in)
	for _, id := range ids {
		if id < 0 || id >= n {
			return nil, fmt.Errorf("gpu: held item %d of %d", id, n)
		}
	}
	g := b.With(k.View(in, ids))
	g.Layout = b.Layout
	return g, nil
}

// itemRows are the rows of items ids of a batch of rowsPerItem rows an
// item, in step order: item ids[i]'s rows id x rowsPerItem ..
// (id+1) x rowsPerItem - 1 at positions i x rowsPerItem on (the row
// selection of a held step).
func itemRows(ids []int, rowsPerItem int) []int {
	rows := make([]int, 0, len(ids)*rowsPerItem)
	for _, id := range ids {
		for r := range rowsPerItem {
			rows = append(rows, id*rowsPerItem+r)
		}
	}
	return rows
}
