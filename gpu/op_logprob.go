//go:build cuda

package gpu

import (
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/logprob"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// logprobKernel is op logprob on the device: kernel logprob
// (kernels/logprob.cu).
type logprobKernel struct{ logprob.Op }

func (logprobKernel) launch(d *Device, b *target.Batch, sched oracle.Schedule, rows, sel []int, o *target.Output, out *devOut, _ bool) (func() error, error) {
	in, s, err := opArgs[oracle.LogProbInput, oracle.LogProbSchedule](b, sched)
	if err != nil {
		return nil, err
	}
	dt := b.In
	if in.Rows < 0 || in.Vocab < 1 {
		return nil, fmt.Errorf("rows %d vocab %d: %w", in.Rows, in.Vocab, oracle.ErrShape)
	}
	if err := ops.FirstErr(needItems(b, "logits", len(in.Logits), in.Rows*in.Vocab), need("targets", len(in.Targets), in.Rows)); err != nil {
		return nil, err
	}
	tg := make([]int, len(in.Targets))
	for r, t := range in.Targets {
		if t < 0 || int(t) >= in.Vocab {
			return nil, fmt.Errorf("row %d target %d outside vocab %d: %w", r, t, in.Vocab, oracle.ErrShape)
		}
		tg[r] = int(t)
	}
	xb := encoded(dt, in.Logits)
	return func() error {
		n := len(sel)
		x, rs, rowOf, err := d.itemInput(b, xb, in.Vocab, rows, sel, nil)
		if err != nil {
			return err
		}
		// the kernel reads the target of the row it reads: item i's at
		// rowOf(i) (a lazy batch's rows are the case's items)
		byRow := tg
		if b.Lazy() {
			top := 0
			for i := range tg {
				top = max(top, rowOf(i))
			}
			byRow = make([]int, top+1)
			for i, v := range tg {
				byRow[rowOf(i)] = v
			}
		}
		t, err := d.uploadInts(byRow, true)
		if err != nil {
			d.pool.put(x, rs)
			return err
		}
		defer d.pool.put(x, t, rs)
		if out.buf, err = d.pool.get(4 * n); err != nil {
			return err
		}
		taps, err := d.tapsOut(o, n)
		if err != nil {
			return err
		}
		return d.logprobOn(x, t, rs, out.buf, taps.buf, n, in.Vocab, dt, s)
	}, nil
}

// logprobOn launches the logprob kernel on inputs already on the device
// (x: the logits, vocab a row; t: each row's target as int32; rs: the
// selected rows or nil for n rows in order) into y (one fp32 a row) and
// taps (two fp32 a row: row max, sum of exponentials), without waiting
// (under do).
func (d *Device) logprobOn(x, t, rs, y, taps *buffer, n, vocab int, dt oracle.DType, s oracle.LogProbSchedule) error {
	r := s.Reduce
	return d.launch("logprob", n, 1, r.Threads, ptrArg(x), ptrArg(t), ptrArg(y), ptrArg(taps), ptrArg(rs),
		arg(vocab), arg(dt), arg(r.Vec), arg(r.Warp), arg(r.Cross))
}
