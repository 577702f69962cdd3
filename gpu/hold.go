//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Held is an rmsnorm batch kept on the device for a scan: its rows and
// weights are uploaded once by Hold, and Run and Alone compute batches made
// of its rows with no further upload. Each run still chooses its schedule
// by the target's policy for the batch it computes (len(ids) rows), as
// Target.Run does.
type Held struct {
	t    *Target
	in   oracle.RMSNormInput // sizes, eps and output dtype; X and W live on the device
	dt   oracle.DType
	x, w *buffer
	ids  *buffer // 0..Rows-1 as int64: the row selections of Alone's one-row launches
}

// Hold uploads rmsnorm batch b (rows, weights) for Run and Alone; the rows
// of a lazy batch (inputs.Lazy: a case the target generates) are made
// on the device instead, by the case's generator (and nudged there for a
// boundary case), as Run makes them, and copied into the held batch's own
// buffer. Other ops are not held: their error wraps
// target.ErrUnsupported.
func (t *Target) Hold(b *target.Batch) (*Held, error) {
	if op := (rmsnorm.Op{}).Name(); b.Op != op || t.info.Op != op {
		return nil, fmt.Errorf("gpu: hold a %s batch for %s: %w", b.Op, t.info.Name, target.ErrUnsupported)
	}
	in := *b.Input.(*oracle.RMSNormInput)
	if in.Rows < 1 || in.Hidden < 1 {
		return nil, fmt.Errorf("gpu: hold rows %d hidden %d: %w", in.Rows, in.Hidden, oracle.ErrShape)
	}
	if err := ops.FirstErr(needItems(b, "x", len(in.X), in.Rows*in.Hidden), need("w", len(in.W), in.Hidden)); err != nil {
		return nil, fmt.Errorf("gpu: hold: %w", err)
	}
	if b.Lazy() && !t.Generates(b.Source) {
		return nil, fmt.Errorf("gpu: hold: %s does not make the rows of this lazy batch: %w", t.info.Name, target.ErrUnsupported)
	}
	h := &Held{t: t, in: in, dt: b.In}
	h.in.X, h.in.W = nil, nil
	d := t.dev
	err := d.do(func() (err error) {
		if h.w, err = d.upload(b.In, in.W); err != nil { // first: a boundary draw's nudge reads them
			return err
		}
		if b.Lazy() {
			h.x, err = d.generatedRows(b, &in, h.w)
		} else {
			h.x, err = d.upload(b.In, in.X)
		}
		if err != nil {
			return err
		}
		h.ids, err = d.uploadInts(spec.Iota(in.Rows), false)
		return err
	})
	if err != nil {
		h.Release()
		return nil, fmt.Errorf("gpu: hold: %w", err)
	}
	return h, nil
}

// generatedRows makes rows 0..in.Rows-1 of lazy rmsnorm batch b on the
// device (itemInput: the case's generator, nudged with the weights w for
// a boundary case) and copies them into a buffer of their own, which no
// cache evicts while the batch is held (under do).
func (d *Device) generatedRows(b *target.Batch, in *oracle.RMSNormInput, w *buffer) (*buffer, error) {
	nudge := newRMSNormNudge(b, in, b.In, encoded(b.In, in.W))
	if nudge != nil {
		nudge.w = w
	}
	x, rs, _, err := d.itemInput(b, nil, in.Hidden, nil, spec.Iota(in.Rows), nudge)
	if err != nil {
		return nil, err
	}
	defer d.pool.put(x, rs) // a kept (cached) tensor stays in the cache
	n := in.Rows * in.Hidden * dsize(b.In)
	own, err := d.pool.get(n)
	if err != nil {
		return nil, err
	}
	if err := cu.MemcpyDtoDAsync(own.ptr, x.ptr, int64(n), d.stream); err != nil {
		d.pool.put(own)
		return nil, fmt.Errorf("copy the generated rows: %w", err)
	}
	return own, nil
}

// heldOrReleased returns h, the held batch of target name, when err (of
// uploading or making its buffers) is nil; else it releases what h holds
// and returns err, naming the target.
func heldOrReleased[H interface{ Release() }](h H, name string, err error) (H, error) {
	if err != nil {
		h.Release()
		var none H
		return none, fmt.Errorf("gpu: hold for %s: %w", name, err)
	}
	return h, nil
}

// Release returns the held buffers to the device's pool.
func (h *Held) Release() {
	h.t.dev.locked(func() { h.t.dev.pool.put(h.x, h.w, h.ids) })
	h.x, h.w, h.ids = nil, nil, nil
}

// plan is the target's schedules for a batch of n rows of the held shape:
// one run of all n rows with the schedule its policy gives the batch, or
// for a row drift model the runs of one schedule its run's policy gives
// the rows (rowRuns).
func (h *Held) plan(n int) ([]rowRun, error) {
	in := h.in
	in.Rows = n
	b := &target.Batch{Op: rmsnorm.Op{}.Name(), In: h.dt, Out: in.Out, Input: &in}
	if h.t.rows != nil {
		p := h.t.rows()
		return rowRuns(n, func(j int) oracle.Schedule { return p(b, j) })
	}
	s, err := scheduleOf[oracle.RMSNormSchedule](h.t.policy(b))
	if err != nil {
		return nil, err
	}
	return []rowRun{{from: 0, to: n, s: s}}, s.Validate()
}

// errReleased is the error of a call on a held batch after its Release.
var errReleased = errors.New("gpu: held batch already released")

// heldRun checks a Run of rows ids on a held batch of rows rows
// (released: after its Release): the context not done, the batch not
// released, every id a held row. prefix says whether ids are 0..n-1,
// which a Run reads in place.
func heldRun(ctx context.Context, released bool, ids []int, rows int) (prefix bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if released {
		return false, errReleased
	}
	prefix = true
	for i, id := range ids {
		if id < 0 || id >= rows {
			return false, fmt.Errorf("gpu: held row %d of %d", id, rows)
		}
		prefix = prefix && id == i
	}
	return prefix, nil
}

// heldAlone checks an Alone of rows 0..n-1 on a held batch of rows rows,
// as heldRun checks a Run.
func heldAlone(ctx context.Context, released bool, n, rows int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if released {
		return errReleased
	}
	if n < 0 || n > rows {
		return fmt.Errorf("gpu: %d rows alone of %d held", n, rows)
	}
	return nil
}

// heldPrefix checks an enqueuePrefix of rows 0..v-1 on a held batch of
// rows rows: the batch not released, 1 <= v <= rows.
func heldPrefix(released bool, v, rows int) error {
	if released {
		return errReleased
	}
	if v < 1 || v > rows {
		return fmt.Errorf("gpu: prefix of %d rows of %d held", v, rows)
	}
	return nil
}

// Run computes the batch whose row i is held row ids[i]: a prefix (ids
// 0..n-1) reads the held rows in place, any other list through the
// kernel's row selection. The output and its taps stay on the device; the
// kernel is queued, not waited for.
func (h *Held) Run(ctx context.Context, ids []int) (*target.Output, error) {
	prefix, err := heldRun(ctx, h.x == nil, ids, h.in.Rows)
	if err != nil {
		return nil, err
	}
	n := len(ids)
	plan, err := h.plan(n)
	if err != nil {
		return nil, fmt.Errorf("gpu: %s: %w", h.t.info.Name, err)
	}
	d := h.t.dev
	o := &target.Output{Rows: spec.Iota(n), Cols: h.in.Hidden, DType: h.in.Out}
	out := newDevOut(d, n, h.in.Hidden, h.in.Out)
	err = d.do(func() error {
		var rs *buffer
		if !prefix {
			var err error
			if rs, err = d.uploadInts(ids, false); err != nil {
				return err
			}
			defer d.pool.put(rs)
		}
		if len(plan) == 1 {
			return d.rmsnormOn(h.x, h.w, rs, n, h.in.Hidden, h.dt, h.in.Out, h.in.Eps, plan[0].s, o, out)
		}
		var err error
		if out.buf, err = d.pool.get(n * h.in.Hidden * dsize(h.in.Out)); err != nil {
			return err
		}
		taps, err := d.tapsOut(o, n)
		if err != nil {
			return err
		}
		return h.launchPlan(d.stream, plan, out.buf, taps.buf, rs)
	})
	o.Device = out
	if err != nil {
		o.Release()
		return nil, fmt.Errorf("gpu: %s: %w", h.t.info.Name, err)
	}
	return o, nil
}

// Alone computes held rows 0..n-1 each as a batch of one row, into one
// output in row order: n launches of one block, each with the schedule the
// policy gives a batch of one row, row i selected by ids[i] and written at
// row i of the output and its taps. The launches are independent and are
// spread over the lane's side streams (fanOut), so they run at once.
func (h *Held) Alone(ctx context.Context, n int) (*target.Output, error) {
	if err := heldAlone(ctx, h.x == nil, n, h.in.Rows); err != nil {
		return nil, err
	}
	plan, err := h.plan(1)
	if err != nil {
		return nil, fmt.Errorf("gpu: %s: %w", h.t.info.Name, err)
	}
	s := plan[0].s
	d := h.t.dev
	hidden, size := h.in.Hidden, dsize(h.in.Out)
	o := &target.Output{Rows: spec.Iota(n), Cols: hidden, DType: h.in.Out}
	out := newDevOut(d, n, hidden, h.in.Out)
	err = d.do(func() error {
		var err error
		if out.buf, err = d.pool.get(n * hidden * size); err != nil {
			return err
		}
		taps, err := d.tapsOut(o, n)
		if err != nil {
			return err
		}
		at := func(b *buffer, off int) *buffer { return &buffer{ptr: b.ptr + cu.DevicePtr(off)} }
		return d.fanOut(n, fanStreams, func(i int, st cu.Stream) error {
			return h.launchOn(st, 1, s, at(out.buf, i*hidden*size), at(taps.buf, 8*i), at(h.ids, 8*i))
		})
	})
	o.Device = out
	if err != nil {
		o.Release()
		return nil, fmt.Errorf("gpu: %s, rows alone: %w", h.t.info.Name, err)
	}
	return o, nil
}

// launch queues the rmsnorm kernel on n rows of the held batch with
// schedule s (under do), without waiting: row i of the batch is held row
// rs[i] (int64s on the device), or held row i when rs is nil; output row i
// is written at out and its two fp32 taps at taps.
func (h *Held) launch(n int, s oracle.RMSNormSchedule, out, taps, rs *buffer) error {
	return h.launchOn(h.t.dev.stream, n, s, out, taps, rs)
}

// launchPlan queues on stream st one launch a run of plan (under do),
// without waiting: the run's rows of the batch are held rows rs[from..to)
// (int64s on the device; rs nil: held rows in order), written at the
// same rows of out and taps. A plan of one run is one launch, as launch's.
func (h *Held) launchPlan(st cu.Stream, plan []rowRun, out, taps, rs *buffer) error {
	if len(plan) == 1 {
		return h.launchOn(st, plan[0].to, plan[0].s, out, taps, rs)
	}
	if rs == nil {
		rs = h.ids
	}
	size := h.in.Hidden * dsize(h.in.Out)
	at := func(b *buffer, off int) *buffer { return &buffer{ptr: b.ptr + cu.DevicePtr(off)} }
	for _, r := range plan {
		if err := h.launchOn(st, r.to-r.from, r.s, at(out, r.from*size), at(taps, 8*r.from), at(rs, 8*r.from)); err != nil {
			return err
		}
	}
	return nil
}

// launchOn is launch on stream s of the lane.
func (h *Held) launchOn(st cu.Stream, n int, s oracle.RMSNormSchedule, out, taps, rs *buffer) error {
	r := s.Reduce
	return h.t.dev.launchOn(st, "rmsnorm", n, 1, r.Threads, ptrArg(h.x), ptrArg(h.w), ptrArg(out), ptrArg(taps), ptrArg(rs),
		arg(h.in.Hidden), arg(h.dt), arg(h.in.Out), arg(math.Float32bits(h.in.Eps)), arg(r.Vec), arg(r.Warp), arg(r.Cross), arg(s.Order))
}
