//go:build cuda

package gpu

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// AttnHeld is an attention batch kept on the device for a scan of a GPU
// attention target (Target.HoldAttention): q, k and v packed as the
// kernels read them (decode's caches request after request, with each
// request's offset and length), uploaded once. A step of items ids runs
// the kernels on the held rows of those items (itemRows; a prefix in
// order, with no upload) with the schedule the target's policy gives the
// step's own batch (attnStepBatch); Alone runs each item so. Outputs and
// their taps (attention's fp32 outputs before rounding, as Run's) stay on
// the device; the kernels are queued, not waited for, as Run's are.
type AttnHeld struct {
	t           *Target
	b           *target.Batch // on the host too: what the policy reads of a step
	dt, out     oracle.DType
	q, k, v     *buffer
	ko, kl      *buffer // decode: each request's cache offset and length
	items       int
	rowsPerItem int
	cols        int
}

// attentionInput reports whether in is an attention batch's input.
func attentionInput(in ops.In) bool {
	switch in.(type) {
	case *oracle.PrefillInput, *oracle.DecodeInput:
		return true
	}
	return false
}

// HoldAttention uploads attention batch b for t. A target whose policy
// gives a schedule a row (a row drift model), a lazy batch, and a batch
// of another op are not held: the error wraps target.ErrUnsupported.
func (t *Target) HoldAttention(b *target.Batch) (*AttnHeld, error) {
	unsupported := fmt.Errorf("gpu: hold a %s batch for %s: %w", b.Op, t.info.Name, target.ErrUnsupported)
	if t.info.Op != b.Op || t.rows != nil || b.Lazy() || !attentionInput(b.Input) {
		return nil, unsupported
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	h := &AttnHeld{t: t, b: b, dt: b.In, out: b.OutDType(), items: b.Items(), rowsPerItem: b.RowsPerItem(), cols: b.Cols()}
	if h.items < 1 {
		return nil, fmt.Errorf("gpu: hold a batch of %d items", h.items)
	}
	var qb, kb, vb []byte
	var off, lens []int
	switch in := b.Input.(type) {
	case *oracle.PrefillInput:
		if err := attnCheck(in.Heads, in.KVHeads, in.HeadDim); err != nil {
			return nil, fmt.Errorf("gpu: hold: %w", err)
		}
		if in.SeqLen < 1 {
			return nil, fmt.Errorf("gpu: hold: seq len %d: %w", in.SeqLen, oracle.ErrShape)
		}
		tokens := in.Seqs * in.SeqLen
		kvn := tokens * in.KVHeads * in.HeadDim
		if err := ops.FirstErr(need("q", len(in.Q), tokens*in.Heads*in.HeadDim), need("k", len(in.K), kvn), need("v", len(in.V), kvn)); err != nil {
			return nil, fmt.Errorf("gpu: hold: %w", err)
		}
		qb, kb, vb = encoded(h.dt, in.Q), encoded(h.dt, in.K), encoded(h.dt, in.V)
	case *oracle.DecodeInput:
		if err := attnCheck(in.Heads, in.KVHeads, in.HeadDim); err != nil {
			return nil, fmt.Errorf("gpu: hold: %w", err)
		}
		var total int
		var err error
		if off, lens, total, err = packedCaches(b, in, nil); err != nil {
			return nil, fmt.Errorf("gpu: hold: %w", err)
		}
		if err := need("q", len(in.Q), len(in.K)*in.Heads*in.HeadDim); err != nil {
			return nil, fmt.Errorf("gpu: hold: %w", err)
		}
		pack := func(cache [][]float32) []byte {
			sz := dsize(h.dt)
			host := hostBuf(total * in.KVHeads * in.HeadDim * sz)
			for r, c := range cache {
				encode(host[off[r]*in.KVHeads*in.HeadDim*sz:], h.dt, c)
			}
			return host
		}
		qb, kb, vb = encoded(h.dt, in.Q), pack(in.K), pack(in.V)
	default:
		return nil, unsupported
	}
	d := t.dev
	err := d.do(func() (err error) {
		if h.q, h.k, h.v, err = d.uploadAttn(qb, kb, vb)(); err != nil {
			return err
		}
		if off == nil {
			return nil
		}
		if h.ko, err = d.uploadInts(off, false); err != nil {
			return err
		}
		h.kl, err = d.uploadInts(lens, false)
		return err
	})
	return heldOrReleased(h, t.info.Name, err)
}

// Release returns the held buffers to the device's pool.
func (h *AttnHeld) Release() {
	d := h.t.dev
	d.locked(func() { d.pool.put(h.q, h.k, h.v, h.ko, h.kl) })
	h.q, h.k, h.v, h.ko, h.kl = nil, nil, nil, nil, nil
}

// Run computes the batch whose item i is held item ids[i]: the held rows
// of the items (a prefix in order, in place; any other list through the
// kernels' row selection), with the schedule the target's policy gives
// the batch of those items. The output and its taps stay on the device;
// the kernels are queued, not waited for.
func (h *AttnHeld) Run(ctx context.Context, ids []int) (*target.Output, error) {
	prefix, err := heldRun(ctx, h.q == nil, ids, h.items)
	if err != nil {
		return nil, err
	}
	s, err := h.schedule(ids)
	if err != nil {
		return nil, err
	}
	d := h.t.dev
	n := len(ids) * h.rowsPerItem
	o, out := h.newOutput(n)
	err = d.do(func() error {
		var rs *buffer
		if !prefix {
			var err error
			if rs, err = d.uploadInts(itemRows(ids, h.rowsPerItem), false); err != nil {
				return err
			}
			defer d.pool.put(rs)
		}
		y, taps, err := h.outputs(o, out, n)
		if err != nil {
			return err
		}
		return h.launch(rs, n, s, y, taps)
	})
	if err != nil {
		o.Release()
		return nil, fmt.Errorf("gpu: %s, a batch of %d items: %w", h.t.info.Name, len(ids), err)
	}
	return o, nil
}

// Alone computes held items 0..n-1 each as a batch of one item, with the
// schedule the policy gives that batch, into one output in item order:
// one launch (decode: two) an item, its rows selected in place.
func (h *AttnHeld) Alone(ctx context.Context, n int) (*target.Output, error) {
	if err := heldAlone(ctx, h.q == nil, n, h.items); err != nil {
		return nil, err
	}
	scheds := make([]oracle.AttentionSchedule, n)
	for i := range n {
		var err error
		if scheds[i], err = h.schedule([]int{i}); err != nil {
			return nil, err
		}
	}
	d := h.t.dev
	rpi := h.rowsPerItem
	o, out := h.newOutput(n * rpi)
	err := d.do(func() error {
		rs, err := d.uploadInts(itemRows(spec.Iota(n), rpi), false)
		if err != nil {
			return err
		}
		defer d.pool.put(rs)
		y, taps, err := h.outputs(o, out, n*rpi)
		if err != nil {
			return err
		}
		size := h.cols * dsize(h.out)
		for i := range n {
			var ti *buffer
			if taps != nil {
				ti = at(taps, 4*i*rpi*h.cols)
			}
			if err := h.launch(at(rs, 8*i*rpi), rpi, scheds[i], at(y, i*rpi*size), ti); err != nil {
				return fmt.Errorf("item %d alone: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		o.Release()
		return nil, fmt.Errorf("gpu: %s, items alone: %w", h.t.info.Name, err)
	}
	return o, nil
}

// schedule is the schedule the target's policy gives the batch of held
// items ids (attnStepBatch).
func (h *AttnHeld) schedule(ids []int) (oracle.AttentionSchedule, error) {
	g, err := attnStepBatch(h.b, ids)
	if err != nil {
		return oracle.AttentionSchedule{}, err
	}
	s, err := scheduleOf[oracle.AttentionSchedule](h.t.policy(g))
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		return s, fmt.Errorf("gpu: %s: %w", h.t.info.Name, err)
	}
	return s, nil
}

// newOutput is the output of n rows, its buffers not taken yet (outputs).
func (h *AttnHeld) newOutput(n int) (*target.Output, *devOut) {
	o := &target.Output{Rows: spec.Iota(n), Cols: h.cols, DType: h.out}
	out := newDevOut(h.t.dev, n, h.cols, h.out)
	o.Device = out
	return o, out
}

// outputs takes o's buffers for n rows: the values, and the taps (nil
// for fp32 outputs, as Run's) (under do).
func (h *AttnHeld) outputs(o *target.Output, out *devOut, n int) (y, taps *buffer, err error) {
	d := h.t.dev
	if out.buf, err = d.pool.get(n * h.cols * dsize(h.out)); err != nil {
		return nil, nil, err
	}
	taps, err = d.attnTaps(o, n, h.cols, h.out, true)
	return out.buf, taps, err
}

// launch queues the op's kernels on the n held rows rs (nil: rows 0..n-1)
// with schedule s, writing y and taps (under do; not waited for).
func (h *AttnHeld) launch(rs *buffer, n int, s oracle.AttentionSchedule, y, taps *buffer) error {
	d := h.t.dev
	switch in := h.b.Input.(type) {
	case *oracle.PrefillInput:
		return d.prefillOn(h.q, h.k, h.v, rs, n, in, s, h.dt, y, taps)
	case *oracle.DecodeInput:
		return d.decodeOn(h.q, h.k, h.v, h.ko, h.kl, rs, n, in, s, h.dt, y, taps)
	}
	return fmt.Errorf("gpu: held %s: not attention", h.b.Op)
}
