//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// UserHeld is a batch kept on the device for a scan of a user kernel
// (`bitparity scan --kernel`): its inputs are uploaded once by
// HoldUserKernel, Run launches the kernel on a prefix of the held rows in
// place or on a gather of them copied on the device, Alone launches it
// once per row, and CheckPrefixes runs a window of prefixes in bulk
// (checkPrefixes). Each call is waited for before it returns (Alone's
// launches and a bulk window's once, at their end, not one by one), so a
// fault or a hang belongs to the call, the batch or the window of
// prefixes the scan announced before it; the outputs stay on the device
// for the scan's compares. Every output is filled with 0xff bytes (NaN in
// every dtype) before the launch that writes it, so values the kernel
// never writes show.
type UserHeld struct {
	k        *userKernel
	in       KernelArgs
	dt, out  oracle.DType
	rows     int
	cols     int                // output values per row
	bufs     map[string]*buffer // every input, as uploaded
	rowBytes map[string]int     // bytes a row of each per-row input
	ptrs     map[string]*buffer // the bulk check's launch arguments: bufs and the step's output
}

// IsUserKernel reports whether t is a user kernel NewUserKernel made (in
// this process: a scan's worker).
func IsUserKernel(t target.Target) bool {
	_, ok := t.(*userKernel)
	return ok
}

// HoldUserKernel uploads batch b for user kernel t (a target NewUserKernel
// made). The rows of a lazy rmsnorm batch (inputs.Lazy: sizes and
// weights, a case of generator version 2) are made on the device instead,
// by the case's generator (and nudged there for a boundary case), as a GPU
// rmsnorm target's held batch makes them (Target.Hold): only the weights
// are uploaded. Other targets, and other lazy batches, are not held: the
// error wraps target.ErrUnsupported.
func HoldUserKernel(t target.Target, b *target.Batch) (*UserHeld, error) {
	k, ok := t.(*userKernel)
	if !ok {
		return nil, fmt.Errorf("gpu: %s is not a user kernel: %w", t.Info().Name, target.ErrUnsupported)
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	m := k.m
	if b.Op != m.Op {
		return nil, fmt.Errorf("target %s runs %s, not %s", k.info.Name, m.Op, b.Op)
	}
	abi := kernelOps[m.Op]
	if b.Lazy() && (!abi.DeviceRows || !generates(b.Op, b.Source)) {
		return nil, fmt.Errorf("gpu: hold for %s: the device does not make the rows of this lazy %s batch: %w", k.info.Name, b.Op, target.ErrUnsupported)
	}
	if !slices.Contains(m.In, b.In) || !slices.Contains(m.Out, b.OutDType()) {
		return nil, fmt.Errorf("target %s: %s -> %s: %w (manifest in %v out %v)", k.info.Name, b.In, b.OutDType(), ErrUnsupported, m.In, m.Out)
	}
	if abi.Attention {
		return nil, fmt.Errorf("gpu: %s: attention batches are not held (each step is run with Run): %w", k.info.Name, target.ErrUnsupported)
	}
	in, err := KernelInputs(b, k.d.sms)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", k.info.Name, err)
	}
	h := &UserHeld{k: k, in: in, dt: b.In, out: b.OutDType(), rows: b.Rows(), cols: b.Cols(),
		bufs: map[string]*buffer{}, rowBytes: map[string]int{}}
	if h.rows < 1 {
		return nil, fmt.Errorf("gpu: hold a batch of %d rows", h.rows)
	}
	d := k.d
	err = d.do(func() error {
		for _, name := range slices.Sorted(maps.Keys(h.in.Tensors)) {
			v := h.in.Tensors[name]
			if b.Lazy() && name == "x" {
				continue // made below, once the weights it is nudged with are there
			}
			var buf *buffer
			var err error
			size := dsize(h.dt)
			if v.Ints != nil {
				buf, err = d.uploadInts(v.Ints, true)
				size = 4
			} else {
				buf, err = d.upload(h.dt, v.Vals)
			}
			if err != nil {
				return err
			}
			h.bufs[name] = buf
			if slices.Contains(h.in.perRow, name) {
				n := len(v.Vals) + len(v.Ints)
				h.rowBytes[name] = n / h.rows * size
			}
		}
		if !b.Lazy() {
			return nil
		}
		in := b.Input.(*oracle.RMSNormInput)
		x, err := d.generatedRows(b, in, h.bufs["w"])
		if err != nil {
			return err
		}
		h.bufs["x"], h.rowBytes["x"] = x, in.Hidden*dsize(h.dt)
		return nil
	})
	h.in.Tensors = nil // the values live on the device now
	if err != nil {
		h.Release()
		return nil, fmt.Errorf("gpu: hold for %s: %w", k.info.Name, err)
	}
	return h, nil
}

// Release returns the held buffers to the device's pool.
func (h *UserHeld) Release() {
	d := h.k.d
	d.locked(func() {
		for _, b := range h.bufs {
			d.pool.put(b)
		}
	})
	h.bufs, h.ptrs = nil, nil
}

// Run computes the batch whose row i is held row ids[i]: one launch with
// the manifest's geometry for len(ids) rows, waited for. A prefix (ids
// 0..n-1) reads the held rows in place; any other list is gathered first
// into scratch buffers, one device copy per run of consecutive rows. A
// launch or wait error wraps target.ErrTargetCrashed.
func (h *UserHeld) Run(ctx context.Context, ids []int) (*target.Output, error) {
	prefix, err := heldRun(ctx, h.bufs == nil, ids, h.rows)
	if err != nil {
		return nil, err
	}
	n := len(ids)
	k, d := h.k, h.k.d
	o := &target.Output{Rows: seq(n), Cols: h.cols, DType: h.out}
	out := newDevOut(d, n, h.cols, h.out)
	o.Device = out
	err = d.do(func() error {
		ptrs := maps.Clone(h.bufs)
		var scratch []*buffer
		defer func() { d.pool.put(scratch...) }()
		if !prefix {
			for name, rb := range h.rowBytes {
				g, err := d.pool.get(n * rb)
				if err != nil {
					return err
				}
				scratch = append(scratch, g)
				if err := h.gather(g, h.bufs[name], ids, rb); err != nil {
					return err
				}
				ptrs[name] = g
			}
		}
		y, err := h.output(out, n)
		if err != nil {
			return err
		}
		ptrs["y"] = y
		if err := h.launch(d.stream, ptrs, n); err != nil {
			return err
		}
		return h.wait(fmt.Sprintf("%d rows", n))
	})
	if err != nil {
		o.Release()
		return nil, fmt.Errorf("target %s, a batch of %d rows: %w", k.info.Name, n, err)
	}
	return o, nil
}

// Alone computes held rows 0..n-1 each as a batch of one row, into one
// output in row order: n launches for one row, queued one after another
// and waited for once, after the last.
func (h *UserHeld) Alone(ctx context.Context, n int) (*target.Output, error) {
	if err := heldAlone(ctx, h.bufs == nil, n, h.rows); err != nil {
		return nil, err
	}
	k, d := h.k, h.k.d
	o := &target.Output{Rows: seq(n), Cols: h.cols, DType: h.out}
	out := newDevOut(d, n, h.cols, h.out)
	o.Device = out
	row := h.cols * dsize(h.out)
	err := d.do(func() error {
		y, err := h.output(out, n)
		if err != nil {
			return err
		}
		ptrs := maps.Clone(h.bufs)
		for i := range n {
			for name, rb := range h.rowBytes {
				ptrs[name] = &buffer{ptr: h.bufs[name].ptr + cu.DevicePtr(i*rb)}
			}
			ptrs["y"] = &buffer{ptr: y.ptr + cu.DevicePtr(i*row)}
			if err := h.launch(d.stream, ptrs, 1); err != nil {
				return fmt.Errorf("row %d alone: %w", i, err)
			}
		}
		return h.wait(fmt.Sprintf("%d rows each alone", n))
	})
	if err != nil {
		o.Release()
		return nil, fmt.Errorf("target %s: %w", k.info.Name, err)
	}
	return o, nil
}

// output gets out's buffer for n rows, filled with 0xff bytes (NaN in
// every dtype) so values the kernel never writes show (under do; queued
// on the lane's stream).
func (h *UserHeld) output(out *devOut, n int) (*buffer, error) {
	d := h.k.d
	y, err := d.pool.get(n * h.cols * dsize(h.out))
	if err != nil {
		return nil, err
	}
	out.buf = y
	return y, h.clear(d.stream, y, n)
}

// clear fills the first n output rows of y with 0xff bytes on stream st
// (under do; not waited for).
func (h *UserHeld) clear(st cu.Stream, y *buffer, n int) error {
	if err := cu.MemsetD8Async(y.ptr, 0xff, int64(n*h.cols*dsize(h.out)), st); err != nil {
		return fmt.Errorf("%w: gpu: clear the output: %w", target.ErrTargetCrashed, err)
	}
	return nil
}

// gather copies rows ids of src (rb bytes a row) into dst in order, one
// device-to-device copy per run of consecutive ids (under do).
func (h *UserHeld) gather(dst, src *buffer, ids []int, rb int) error {
	d := h.k.d
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[j-1]+1 {
			j++
		}
		if err := cu.MemcpyDtoDAsync(dst.ptr+cu.DevicePtr(i*rb), src.ptr+cu.DevicePtr(ids[i]*rb), int64((j-i)*rb), d.stream); err != nil {
			return fmt.Errorf("gpu: gather held rows: %w", err)
		}
		i = j
	}
	return nil
}

// launch queues the kernel on n rows at ptrs on stream st (under do; not
// waited for).
func (h *UserHeld) launch(st cu.Stream, ptrs map[string]*buffer, n int) error {
	shape := maps.Clone(h.in.Sizes)
	shape[h.in.rowsKey] = int64(n)
	return h.k.launch(st, ptrs, shape, &h.in, h.dt, h.out)
}

// wait waits for everything queued on the lane's stream (under do): an
// error there is the kernel's on what (the batch's rows, the rows alone)
// and wraps target.ErrTargetCrashed.
func (h *UserHeld) wait(what string) error {
	if err := h.k.d.stream.Synchronize(); err != nil {
		return fmt.Errorf("%w: %s on %s: %w", target.ErrTargetCrashed, h.k.m.Entry, what, err)
	}
	return nil
}
