//go:build cuda

package gpu

import (
	"encoding/binary"
	"fmt"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// upload copies vals as dt bits to a pooled buffer (under do).
func (d *Device) upload(dt oracle.DType, vals []float32) (*buffer, error) {
	host, err := d.stageUpload(len(vals) * dsize(dt))
	if err != nil {
		return nil, err
	}
	encode(host, dt, vals)
	return d.toDevice(host)
}

// uploadInts copies vals as int64 (or int32 when narrow) to the device.
func (d *Device) uploadInts(vals []int, narrow bool) (*buffer, error) {
	size := 8
	if narrow {
		size = 4
	}
	host, err := d.stageUpload(size * len(vals))
	if err != nil {
		return nil, err
	}
	if narrow {
		for i, v := range vals {
			binary.LittleEndian.PutUint32(host[4*i:], uint32(int32(v)))
		}
		return d.toDevice(host)
	}
	for i, v := range vals {
		binary.LittleEndian.PutUint64(host[8*i:], uint64(int64(v)))
	}
	return d.toDevice(host)
}

// needItems is need for a batch's per-item tensor, which a lazy batch
// leaves to the device (itemInput).
func needItems(b *target.Batch, name string, got, want int) error {
	if b.Lazy() {
		return nil
	}
	return need(name, got, want)
}

func need(name string, got, want int) error {
	if got != want {
		return fmt.Errorf("%s has %d values, want %d: %w", name, got, want, oracle.ErrShape)
	}
	return nil
}

// Run computes the selected rows of b (all when rows is nil) with schedule
// s (the oracle schedule type of b.Op) on the device. The output stays on
// the device (Output.Device), and so do the fp32 taps, the oracle targets'
// taps bit for bit (target.RunOracle; Output.DeviceTaps): RMSNorm's sum of
// squares and rstd, log-prob's row max and sum of exponentials, and
// attention's fp32 outputs before rounding (TapCols = Cols; none when the
// output dtype is fp32). Run uploads the inputs and launches the kernels
// without waiting for them: the first copy back to the host (a compare's
// summary, a Fetch) waits and reports a kernel's failure.
func (d *Device) Run(b *target.Batch, s oracle.Schedule, rows []int) (*target.Output, error) {
	return d.run(b, s, rows, true)
}

// run is Run; with attnTaps false the attention kernels get a null taps
// pointer and write no taps (a caller that only reads the values, such as
// TransformerOps). RMSNorm and log-prob write their two taps a row either
// way.
func (d *Device) run(b *target.Batch, s oracle.Schedule, rows []int, attnTaps bool) (*target.Output, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	sel, err := oracle.SelectRows(rows, b.Rows())
	if err != nil {
		return nil, fmt.Errorf("gpu %s: %w", b.Op, err)
	}
	o := &target.Output{Rows: sel, Cols: b.Cols(), DType: b.OutDType()}
	out := newDevOut(d, len(sel), o.Cols, o.DType)
	k, ok := kernelOf(b.Op)
	if !ok {
		return nil, fmt.Errorf("gpu %s: no kernel of this op", b.Op)
	}
	run, err := k.launch(d, b, s, rows, sel, o, out, attnTaps)
	if err != nil {
		return nil, fmt.Errorf("gpu %s: %w", b.Op, err)
	}
	o.Device = out
	if err := d.do(run); err != nil {
		o.Release()
		return nil, fmt.Errorf("gpu %s: %w", b.Op, err)
	}
	return o, nil
}

// scheduleOf asserts that s is the schedule type S of the batch's op.
func scheduleOf[S oracle.Schedule](s oracle.Schedule) (S, error) {
	sch, ok := s.(S)
	if !ok {
		return sch, fmt.Errorf("schedule %T, want %T", s, sch)
	}
	return sch, nil
}

// opArgs is what an op kernel's launch takes from Device.run: b's input,
// which must be an *I, and s, which must be the schedule type S of the
// batch's op and valid (S.Validate).
func opArgs[I any, S oracle.Schedule](b *target.Batch, s oracle.Schedule) (*I, S, error) {
	sch, err := scheduleOf[S](s)
	if err == nil {
		err = sch.Validate()
	}
	if err != nil {
		return nil, sch, err
	}
	in, ok := b.Input.(*I)
	if !ok {
		return nil, sch, fmt.Errorf("input %T, want %T", b.Input, in)
	}
	return in, sch, nil
}

// rowsel uploads the selected rows, or returns nil (all rows in order).
func (d *Device) rowsel(rows, sel []int) (*buffer, error) {
	if rows == nil {
		return nil, nil
	}
	return d.selection(sel)
}

// weightedInput puts the shared weights of a token batch (wb, encoded) and
// its per-item tensor on the device (under do): itemInput's x and rs, the
// rows nudged with those weights when nudge is not nil (a lazy boundary
// batch). On an error nothing is left taken from the pool.
func (d *Device) weightedInput(b *target.Batch, xb, wb []byte, cols int, rows, sel []int, nudge *rowNudge) (x, w, rs *buffer, err error) {
	if w, err = d.uploadShared(wb); err != nil {
		return nil, nil, nil, err
	}
	if nudge != nil {
		nudge.w = w
	}
	if x, rs, _, err = d.itemInput(b, xb, cols, rows, sel, nudge); err != nil {
		d.pool.put(w)
		return nil, nil, nil, err
	}
	return x, w, rs, nil
}

// selection puts a row selection (int64 per output row) on the device
// (under do): the device's identity list when it reads rows 0, 1, ... in
// order, else an upload.
func (d *Device) selection(sel []int) (*buffer, error) {
	if spec.IsIota(sel) {
		return d.identity(len(sel))
	}
	return d.uploadInts(sel, false)
}

// tapsOut gives o a device output for n rows of two fp32 taps
// (o.DeviceTaps, o.TapCols = 2), which the relations compare on the device
// with compare_rows in fp32 (under do).
func (d *Device) tapsOut(o *target.Output, n int) (*devOut, error) {
	return d.tapsCols(o, n, 2)
}

// tapsCols gives o a device output for n rows of cols fp32 taps
// (o.DeviceTaps, o.TapCols = cols) (under do).
func (d *Device) tapsCols(o *target.Output, n, cols int) (*devOut, error) {
	taps := newDevOut(d, n, cols, oracle.FP32)
	var err error
	if taps.buf, err = d.pool.get(4 * n * cols); err != nil {
		return nil, err
	}
	o.DeviceTaps, o.TapCols = taps, cols
	return taps, nil
}
