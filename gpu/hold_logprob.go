//go:build cuda

package gpu

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/logprob"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// LogProbHeld is a log-prob batch kept on the device for a scan of a GPU
// target (cuda-logprob, cuda-drift-order-logprob-rows132): the logits
// (rows x vocab) and each row's target are uploaded once by HoldLogProb,
// and Run and Alone launch the logprob kernel on its rows, with the
// schedule the target's policy chooses for a batch of that many rows (the
// launch of Target.Run: Device.logprobOn), queued, not waited for. The
// outputs (one fp32 a row) and their taps (row max, sum of exponentials)
// stay on the device.
type LogProbHeld struct {
	t           *Target
	dt          oracle.DType
	rows, vocab int
	x, tg       *buffer // logits; targets as int32
	released    bool
}

// HoldLogProb uploads log-prob batch b for GPU target t. Other targets
// and batches (a lazy one too) are not held: the error wraps
// target.ErrUnsupported.
func HoldLogProb(t target.Target, b *target.Batch) (*LogProbHeld, error) {
	g, ok := t.(*Target)
	in, isLP := b.Input.(*oracle.LogProbInput)
	if op := (logprob.Op{}).Name(); !ok || g.info.Op != op || b.Op != op || !isLP || in == nil || b.Lazy() {
		return nil, fmt.Errorf("gpu: hold a %s batch for %s as logprob: %w", b.Op, t.Info().Name, target.ErrUnsupported)
	}
	if in.Rows < 1 || in.Vocab < 1 {
		return nil, fmt.Errorf("gpu: hold rows %d vocab %d: %w", in.Rows, in.Vocab, oracle.ErrShape)
	}
	if err := ops.FirstErr(need("logits", len(in.Logits), in.Rows*in.Vocab), need("targets", len(in.Targets), in.Rows)); err != nil {
		return nil, fmt.Errorf("gpu: hold: %w", err)
	}
	tg := make([]int, in.Rows)
	for r, v := range in.Targets {
		if v < 0 || int(v) >= in.Vocab {
			return nil, fmt.Errorf("gpu: hold: row %d target %d outside vocab %d: %w", r, v, in.Vocab, oracle.ErrShape)
		}
		tg[r] = int(v)
	}
	h := &LogProbHeld{t: g, dt: b.In, rows: in.Rows, vocab: in.Vocab}
	d := g.dev
	err := d.do(func() (err error) {
		if h.x, err = d.upload(b.In, in.Logits); err != nil {
			return err
		}
		h.tg, err = d.uploadInts(tg, true)
		return err
	})
	return heldOrReleased(h, g.info.Name, err)
}

// Release returns the held buffers to the device's pool.
func (h *LogProbHeld) Release() {
	d := h.t.dev
	d.locked(func() { d.pool.put(h.x, h.tg) })
	h.x, h.tg, h.released = nil, nil, true
}

// schedule is the target's schedule for a batch of n rows of the held
// shape.
func (h *LogProbHeld) schedule(n int) (oracle.LogProbSchedule, error) {
	in := oracle.LogProbInput{Rows: n, Vocab: h.vocab}
	s, err := scheduleOf[oracle.LogProbSchedule](h.t.policy(&target.Batch{Op: logprob.Op{}.Name(), In: h.dt, Out: oracle.FP32, Input: &in}))
	if err != nil {
		return s, fmt.Errorf("%s at %d rows: %w", h.t.info.Name, n, err)
	}
	return s, s.Validate()
}

// newOutput is an output of n rows on the device and the buffers of its
// values and taps, both taken (under do). On an error the caller releases
// o.
func (h *LogProbHeld) newOutput(n int) (o *target.Output, out, taps *buffer, err error) {
	d := h.t.dev
	o = &target.Output{Rows: spec.Iota(n), Cols: 1, DType: oracle.FP32}
	dev := newDevOut(d, n, 1, oracle.FP32)
	o.Device = dev
	if dev.buf, err = d.pool.get(4 * n); err != nil {
		return o, nil, nil, err
	}
	t, err := d.tapsOut(o, n)
	if err != nil {
		return o, nil, nil, err
	}
	return o, dev.buf, t.buf, nil
}

// Run computes the batch whose row i is held row ids[i]: a prefix reads
// the held rows in place, any other list through the kernel's row
// selection (the kernel reads the target of the row it reads). Nothing is
// waited for.
func (h *LogProbHeld) Run(ctx context.Context, ids []int) (*target.Output, error) {
	prefix, err := heldRun(ctx, h.released, ids, h.rows)
	if err != nil {
		return nil, err
	}
	n := len(ids)
	s, err := h.schedule(n)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	d := h.t.dev
	var o *target.Output
	err = d.do(func() error {
		var out, taps, rs *buffer
		var err error
		if o, out, taps, err = h.newOutput(n); err != nil {
			return err
		}
		if !prefix {
			if rs, err = d.uploadInts(ids, false); err != nil {
				return err
			}
			defer d.pool.put(rs)
		}
		return d.logprobOn(h.x, h.tg, rs, out, taps, n, h.vocab, h.dt, s)
	})
	if err != nil {
		if o != nil {
			o.Release()
		}
		return nil, fmt.Errorf("gpu: %s, a batch of %d rows: %w", h.t.info.Name, n, err)
	}
	return o, nil
}

// Alone computes held rows 0..n-1 each as a batch of one row, into one
// output in row order: n launches of one block with the schedule of a
// one-row batch, launch i reading logits row i and target i in place and
// writing row i of the output and its taps.
func (h *LogProbHeld) Alone(ctx context.Context, n int) (*target.Output, error) {
	if err := heldAlone(ctx, h.released, n, h.rows); err != nil {
		return nil, err
	}
	s, err := h.schedule(1)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	d := h.t.dev
	xrow := h.vocab * dsize(h.dt)
	var o *target.Output
	err = d.do(func() error {
		var out, taps *buffer
		var err error
		if o, out, taps, err = h.newOutput(n); err != nil {
			return err
		}
		for i := range n {
			if err := d.logprobOn(atOffset(h.x, i*xrow), atOffset(h.tg, 4*i), nil, atOffset(out, 4*i), atOffset(taps, 8*i), 1, h.vocab, h.dt, s); err != nil {
				return fmt.Errorf("row %d alone: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		if o != nil {
			o.Release()
		}
		return nil, fmt.Errorf("gpu: %s, rows alone: %w", h.t.info.Name, err)
	}
	return o, nil
}

// enqueuePrefix queues the batch of held rows 0..v-1 (read in place) into
// out (v fp32 values) and taps (2v fp32: each row's max and sum of
// exponentials), with the schedule Run uses for v rows, and returns
// without waiting (under do).
func (h *LogProbHeld) enqueuePrefix(v int, out, taps *buffer) error {
	if err := heldPrefix(h.released, v, h.rows); err != nil {
		return err
	}
	if taps == nil {
		return fmt.Errorf("gpu: %s writes taps: taps is nil", h.t.info.Name)
	}
	s, err := h.schedule(v)
	if err != nil {
		return err
	}
	return h.t.dev.logprobOn(h.x, h.tg, nil, out, taps, v, h.vocab, h.dt, s)
}
