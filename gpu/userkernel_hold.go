//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// UserHeld is a batch kept on the device for a scan of a user kernel
// (`bitparity scan --kernel`): its inputs are uploaded once by
// HoldUserKernel, Run launches the kernel on a prefix of the held items in
// place or on a gather of them copied on the device, Alone launches it
// once per item, and CheckPrefixes runs a window of prefixes in bulk
// (checkPrefixes). An attention batch's step (items: requests or
// sequences) is made as attnStep says: its per-item slabs in place or
// gathered, the paged cache shared, its small int32 tensors in place
// (inPlace: a prefix, an item alone) or uploaded for a gather. Each call
// is waited for before it returns (Alone's launches and a bulk window's
// once, at their end, not one by one), so a fault or a hang belongs to
// the call, the batch or the window of prefixes the scan announced before
// it; the outputs stay on the device for the scan's compares. Every
// output, and an attention kernel's lse (its taps, one fp32 a row), is
// filled with 0xff bytes (NaN in every dtype) before the launch that
// writes it, so values the kernel never writes show.
type UserHeld struct {
	k           *userKernel
	in          KernelArgs // sizes and scalars; an attention batch's int32 tensors too
	dt, out     oracle.DType
	items       int
	rowsPerItem int
	cols        int                // output values per row
	lse         bool               // the kernel writes attention's lse: the output's taps
	bufs        map[string]*buffer // every input, as uploaded
	rowBytes    map[string]int     // bytes an item of each per-item input
	tables      map[int]*buffer    // decode: widthTable(w) by w, the held block table at its own width
	ptrs        map[string]*buffer // the bulk check's launch arguments: bufs and the step's output
}

// IsUserKernel reports whether t is a user kernel NewUserKernel made (in
// this process: a scan's worker).
func IsUserKernel(t target.Target) bool {
	_, ok := t.(*userKernel)
	return ok
}

// HoldUserKernel uploads batch b for user kernel t (a target NewUserKernel
// made), with its layout (an attention batch's page size or chunk). The
// rows of a lazy rmsnorm batch (inputs.Lazy: sizes and weights, a
// case of generator version 2) are made on the device instead,
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
	in, err := KernelInputs(b, k.d.sms)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", k.info.Name, err)
	}
	h := &UserHeld{k: k, in: in, dt: b.In, out: b.OutDType(), items: in.items(), rowsPerItem: b.RowsPerItem(), cols: b.Cols(),
		lse: abi.Attention && slices.Contains(m.Params, "lse"), bufs: map[string]*buffer{}, rowBytes: map[string]int{}, tables: map[int]*buffer{}}
	if h.items < 1 || h.items != b.Items() {
		return nil, fmt.Errorf("gpu: hold a batch of %d items (%d in its inputs)", b.Items(), h.items)
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
				h.rowBytes[name] = n / h.items * size
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
	if t, ok := h.bufs["block_table"]; ok {
		h.tables[int(h.in.Sizes["max_pages"])] = t
	}
	ints := map[string]KernelTensor{} // what attnStep reads; the values live on the device now
	for name, v := range h.in.Tensors {
		if abi.Attention && v.Ints != nil {
			ints[name] = v
		}
	}
	h.in.Tensors = ints
	return heldOrReleased(h, k.info.Name, err)
}

// Release returns the held buffers to the device's pool.
func (h *UserHeld) Release() {
	d := h.k.d
	d.locked(func() {
		for _, b := range h.bufs {
			d.pool.put(b)
		}
		for _, t := range h.tables {
			if t != h.bufs["block_table"] {
				d.pool.put(t)
			}
		}
	})
	h.bufs, h.tables, h.ptrs = nil, nil, nil
}

// Run computes the batch whose item i is held item ids[i]: one launch with
// the manifest's geometry for len(ids) items, waited for. A prefix (ids
// 0..n-1) reads the held items in place; any other list is gathered first
// into scratch buffers, one device copy per run of consecutive items (an
// attention batch's int32 tensors of the step made on the host and
// uploaded). A launch or wait error wraps target.ErrTargetCrashed.
func (h *UserHeld) Run(ctx context.Context, ids []int) (*target.Output, error) {
	prefix, err := heldRun(ctx, h.bufs == nil, ids, h.items)
	if err != nil {
		return nil, err
	}
	n := len(ids)
	k, d := h.k, h.k.d
	o, out := h.newOutput(n)
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
		off := 0
		if !prefix {
			off = -1
		}
		shape, err := h.step(ptrs, ids, off, &scratch)
		if err != nil {
			return err
		}
		if err := h.outputs(o, out, ptrs, n); err != nil {
			return err
		}
		if err := h.launch(d.stream, ptrs, shape); err != nil {
			return err
		}
		return h.wait(fmt.Sprintf("%d items", n))
	})
	if err != nil {
		o.Release()
		return nil, fmt.Errorf("target %s, a batch of %d items: %w", k.info.Name, n, err)
	}
	return o, nil
}

// Alone computes held items 0..n-1 each as a batch of one item, into one
// output in item order: n launches for one item, read in place, queued
// one after another and waited for once, after the last.
func (h *UserHeld) Alone(ctx context.Context, n int) (*target.Output, error) {
	if err := heldAlone(ctx, h.bufs == nil, n, h.items); err != nil {
		return nil, err
	}
	k, d := h.k, h.k.d
	o, out := h.newOutput(n)
	row := h.rowsPerItem * h.cols * dsize(h.out)
	err := d.do(func() error {
		all := map[string]*buffer{}
		if err := h.outputs(o, out, all, n); err != nil {
			return err
		}
		for i := range n {
			ptrs := maps.Clone(h.bufs)
			for name, rb := range h.rowBytes {
				ptrs[name] = at(h.bufs[name], i*rb)
			}
			shape, err := h.step(ptrs, []int{i}, i, nil)
			if err != nil {
				return err
			}
			ptrs["y"] = at(all["y"], i*row)
			if h.lse {
				ptrs["lse"] = at(all["lse"], i*h.rowsPerItem*4)
			}
			if err := h.launch(d.stream, ptrs, shape); err != nil {
				return fmt.Errorf("item %d alone: %w", i, err)
			}
		}
		return h.wait(fmt.Sprintf("%d items each alone", n))
	})
	if err != nil {
		o.Release()
		return nil, fmt.Errorf("target %s: %w", k.info.Name, err)
	}
	return o, nil
}

// at is b from byte off on.
func at(b *buffer, off int) *buffer { return &buffer{ptr: b.ptr + cu.DevicePtr(off)} }

// newOutput is the output of n items, its buffers not taken yet
// (outputs).
func (h *UserHeld) newOutput(n int) (*target.Output, *devOut) {
	rows := n * h.rowsPerItem
	o := &target.Output{Rows: spec.Iota(rows), Cols: h.cols, DType: h.out}
	out := newDevOut(h.k.d, rows, h.cols, h.out)
	o.Device = out
	return o, out
}

// outputs takes o's buffers for n items (out, and the lse taps when the
// kernel writes them), each filled with 0xff bytes, and sets them as
// ptrs' y and lse (under do; queued on the lane's stream).
func (h *UserHeld) outputs(o *target.Output, out *devOut, ptrs map[string]*buffer, n int) error {
	d := h.k.d
	y, err := h.output(out, n)
	if err != nil {
		return err
	}
	ptrs["y"] = y
	if !h.lse {
		return nil
	}
	rows := n * h.rowsPerItem
	taps, err := d.tapsCols(o, rows, 1)
	if err != nil {
		return err
	}
	ptrs["lse"] = taps.buf
	return h.clearTaps(d.stream, taps.buf, n)
}

// step sets in ptrs the per-step tensors of the step of held items ids
// and returns its sizes (under do): for an op other than attention, the
// held sizes for len(ids) items; for attention, attnStep's, its int32
// tensors read in place at item off (inPlace: off 0 for a prefix, i for
// item i alone), or made on the host and uploaded (off < 0; the buffers
// are appended to scratch, which the caller puts back after the wait).
func (h *UserHeld) step(ptrs map[string]*buffer, ids []int, off int, scratch *[]*buffer) (map[string]int64, error) {
	if !kernelOps[h.k.m.Op].Attention {
		shape := maps.Clone(h.in.Sizes)
		shape[h.in.rowsKey] = int64(len(ids))
		return shape, nil
	}
	st, err := h.in.attnStep(ids)
	if err != nil {
		return nil, err
	}
	d := h.k.d
	if off < 0 {
		for name, ints := range st.ints {
			buf, err := d.uploadInts(ints, true)
			if err != nil {
				return nil, err
			}
			*scratch = append(*scratch, buf)
			ptrs[name] = buf
		}
		return st.sizes, nil
	}
	for name, entry := range st.inPlace(off) {
		src := h.bufs[name]
		if name == "block_table" {
			if src, err = h.table(int(st.sizes["max_pages"])); err != nil {
				return nil, err
			}
		}
		ptrs[name] = at(src, 4*entry)
	}
	return st.sizes, nil
}

// table is the held block table cut to width w on the device (widthTable),
// uploaded on the lane's stream the first time it is asked for and kept
// until Release (under do).
func (h *UserHeld) table(w int) (*buffer, error) {
	if t, ok := h.tables[w]; ok {
		return t, nil
	}
	t, err := h.k.d.uploadInts(h.in.widthTable(w), true)
	if err != nil {
		return nil, err
	}
	h.tables[w] = t
	return t, nil
}

// output gets out's buffer for n items, filled with 0xff bytes (NaN in
// every dtype) so values the kernel never writes show (under do; queued
// on the lane's stream).
func (h *UserHeld) output(out *devOut, n int) (*buffer, error) {
	d := h.k.d
	y, err := d.pool.get(n * h.rowsPerItem * h.cols * dsize(h.out))
	if err != nil {
		return nil, err
	}
	out.buf = y
	return y, h.clear(d.stream, y, n)
}

// clear fills the output rows of the first n items of y with 0xff bytes
// on stream st (under do; not waited for).
func (h *UserHeld) clear(st cu.Stream, y *buffer, n int) error {
	if err := cu.MemsetD8Async(y.ptr, 0xff, int64(n*h.rowsPerItem*h.cols*dsize(h.out)), st); err != nil {
		return fmt.Errorf("%w: gpu: clear the output: %w", target.ErrTargetCrashed, err)
	}
	return nil
}

// clearTaps fills the lse of the rows of the first n items with 0xff
// bytes on stream st (under do; not waited for).
func (h *UserHeld) clearTaps(st cu.Stream, lse *buffer, n int) error {
	if err := cu.MemsetD8Async(lse.ptr, 0xff, int64(4*n*h.rowsPerItem), st); err != nil {
		return fmt.Errorf("%w: gpu: clear lse: %w", target.ErrTargetCrashed, err)
	}
	return nil
}

// gather copies items ids of src (rb bytes an item) into dst in order,
// one device-to-device copy per run of consecutive ids (under do).
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

// launch queues the kernel with sizes shape (step's) on the inputs and
// outputs at ptrs on stream st (under do; not waited for).
func (h *UserHeld) launch(st cu.Stream, ptrs map[string]*buffer, shape map[string]int64) error {
	return h.k.launch(st, ptrs, shape, &h.in, h.dt, h.out)
}

// wait waits for everything queued on the lane's stream (under do): an
// error there is the kernel's on what (the batch's items, the items alone)
// and wraps target.ErrTargetCrashed.
func (h *UserHeld) wait(what string) error {
	if err := h.k.d.stream.Synchronize(); err != nil {
		return fmt.Errorf("%w: %s on %s: %w", target.ErrTargetCrashed, h.k.m.Entry, what, err)
	}
	return nil
}
