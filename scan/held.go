package scan

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// held is one draw's batch, held where the target computes.
type held interface {
	// run computes every row of the batch whose item i is item ids[i] of
	// the held batch.
	run(ctx context.Context, ids []int) (*target.Output, error)
	// alone computes items 0..n-1 of the held batch each as a batch of
	// one item, into one output in item order.
	alone(ctx context.Context, n int) (*target.Output, error)
	// resident says the batch stays on the target's device between runs.
	resident() bool
	release()
}

// warmer is a held batch whose target prepares its launches for batches
// of given sizes, in items, before the scan runs them one at a time (a
// cuBLAS gemm's first call at each shape is slow: gpu.GEMMHeld.Warm).
type warmer interface {
	warm(ctx context.Context, sizes []int) error
}

// holders are the ways this build can keep a batch on a target's device:
// an adapter that speaks the scan frames (holdExec), and in the cuda
// build the GPU targets (gpu_cuda.go adds them). Each returns nil and no
// error for a target or batch it does not hold.
var holders = []func(t target.Target, b *target.Batch) (held, error){holdExec}

// caseHolders are the ways this build can make a draw's largest batch
// where the target computes, from its case, with no rows made on the
// host: in the cuda build the GPU rmsnorm targets (gpu_cuda.go). Each
// returns the held batch and the batch (lazy: sizes and shared tensors);
// or no held batch and the batch it made instead (Inputs), which the
// caller holds as any other; or neither, for a target it does not serve.
// pre is the case's batch when the scan made it ahead on the host
// (ahead.go), else nil: a holder takes it where it would make that batch
// (lazy).
var caseHolders []func(t target.Target, c spec.Case, pre *target.Batch) (held, *target.Batch, error)

// hold holds b for t: on t's device when a holder takes it, else on the
// host (every run gathers the items and calls t.Run).
func hold(t target.Target, b *target.Batch) (held, error) {
	for _, f := range holders {
		h, err := f(t, b)
		if err != nil {
			return nil, err
		}
		if h != nil {
			return h, nil
		}
	}
	return &hostHeld{t: t, b: b}, nil
}

// hostHeld holds a batch on the host.
type hostHeld struct {
	t target.Target
	b *target.Batch
}

func (h *hostHeld) resident() bool { return false }
func (h *hostHeld) release()       {}

func (h *hostHeld) run(ctx context.Context, ids []int) (*target.Output, error) {
	g, err := inputs.Gather(h.b, ids)
	if err != nil {
		return nil, err
	}
	return runChecked(ctx, h.t, g)
}

// runChecked runs t on every row of b and checks the output's shape.
func runChecked(ctx context.Context, t target.Target, b *target.Batch) (*target.Output, error) {
	o, err := t.Run(ctx, b, nil)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Info().Name, err)
	}
	if len(o.Rows) != b.Rows() || o.Cols != b.Cols() || o.Values != nil && len(o.Values) != b.Rows()*b.Cols() {
		o.Release()
		return nil, fmt.Errorf("target %s: output of %d rows x %d (%d values), want %d x %d",
			t.Info().Name, len(o.Rows), o.Cols, len(o.Values), b.Rows(), b.Cols())
	}
	return o, nil
}

func (h *hostHeld) alone(ctx context.Context, n int) (*target.Output, error) {
	var all *target.Output
	for i := range n {
		o, err := h.run(ctx, []int{i})
		if err != nil {
			return nil, fmt.Errorf("item %d alone: %w", i, err)
		}
		err = o.ToHost()
		o.Release()
		if err != nil {
			return nil, fmt.Errorf("item %d alone: %w", i, err)
		}
		if all == nil {
			all = &target.Output{Cols: o.Cols, DType: o.DType, TapCols: o.TapCols}
		}
		for range o.Rows {
			all.Rows = append(all.Rows, len(all.Rows))
		}
		all.Values = append(all.Values, o.Values...)
		all.Taps = append(all.Taps, o.Taps...)
	}
	return all, nil
}

// prefixChecker is a held batch that checks the prefix steps of the
// items dimension in bulk on its device (the gpu package's CheckPrefixes):
// for every v of q.items it runs held items 0..v-1 and compares each
// output row, and its fp32 taps when q.taps, with the same row in q.alone
// (the items alone, computed by alone) and in q.ref (the reference batch),
// with no host round trip a step. It returns, in q.items' order, the steps
// with a row differing from its row alone (bulk.go).
type prefixChecker interface {
	checkPrefixes(ctx context.Context, q prefixQuery) ([]*prefixStep, error)
}
