//go:build cuda

package gpu

import (
	"fmt"
	"math"

	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// rmsnormKernel is op rmsnorm on the device: kernel rmsnorm
// (kernels/rmsnorm.cu), and nudge_rmsnorm (kernels/nudge.cu) for the rows
// of a boundary case.
type rmsnormKernel struct{ rmsnorm.Op }

func (rmsnormKernel) launch(d *Device, b *target.Batch, sched oracle.Schedule, rows, sel []int, o *target.Output, out *devOut, _ bool) (func() error, error) {
	in, s, err := opArgs[oracle.RMSNormInput, oracle.RMSNormSchedule](b, sched)
	if err != nil {
		return nil, err
	}
	dt := b.In
	if in.Rows < 0 || in.Hidden < 1 {
		return nil, fmt.Errorf("rows %d hidden %d: %w", in.Rows, in.Hidden, oracle.ErrShape)
	}
	if err := ops.FirstErr(needItems(b, "x", len(in.X), in.Rows*in.Hidden), need("w", len(in.W), in.Hidden)); err != nil {
		return nil, err
	}
	xb, wb := encoded(dt, in.X), encoded(dt, in.W)
	nudge := newRMSNormNudge(b, in, dt, wb)
	return func() error {
		n := len(sel)
		x, w, rs, err := d.weightedInput(b, xb, wb, in.Hidden, rows, sel, nudge)
		if err != nil {
			return err
		}
		defer d.pool.put(x, w, rs)
		return d.rmsnormOn(x, w, rs, n, in.Hidden, dt, in.Out, in.Eps, s, o, out)
	}, nil
}

// rmsnormOn launches the rmsnorm kernel on inputs already on the device
// (x: the batch, w: the weights, rs: the selected rows or nil for n rows in
// order) into a new buffer of out, with its fp32 taps [sum of squares,
// rstd] in a device output of two columns (o.DeviceTaps). It does not wait:
// the next copy to the host (a compare's summary) does (under do).
func (d *Device) rmsnormOn(x, w, rs *buffer, n, hidden int, dt, outDT oracle.DType, eps float32, s oracle.RMSNormSchedule, o *target.Output, out *devOut) error {
	var err error
	if out.buf, err = d.pool.get(n * hidden * dsize(outDT)); err != nil {
		return err
	}
	taps, err := d.tapsOut(o, n)
	if err != nil {
		return err
	}
	r := s.Reduce
	return d.launch("rmsnorm", n, 1, r.Threads, ptrArg(x), ptrArg(w), ptrArg(out.buf), ptrArg(taps.buf), ptrArg(rs),
		arg(hidden), arg(dt), arg(outDT), arg(math.Float32bits(eps)), arg(r.Vec), arg(r.Warp), arg(r.Cross), arg(s.Order))
}

// newRMSNormNudge returns the nudge of lazy batch b (rmsnorm input in,
// dtype dt, weights encoded as wb) when its case is of the boundary
// distribution, else nil. A batch whose rows get no nudge (an fp32
// output, hidden below 8, no normal weight) has a key and no probes: its
// rows are the generator's as they are.
func newRMSNormNudge(b *target.Batch, in *oracle.RMSNormInput, dt oracle.DType, wb []byte) *rowNudge {
	if !boundaryLazy(b) {
		return nil
	}
	return rmsNormNudge(in, dt, wb)
}

// rmsNormNudge is the nudge of rmsnorm rows with input in's weights
// (encoded as wb), eps and output dtype.
func rmsNormNudge(in *oracle.RMSNormInput, dt oracle.DType, wb []byte) *rowNudge {
	rows := boundary.NewRMSNormRows(in.W, in.Eps, dt, in.Out, target.OracleRMSNormSchedule)
	key := nudgeKey{op: rmsnorm.Op{}.Name(), w: hashWeights(wb), eps: math.Float32bits(in.Eps), out: in.Out}
	return &rowNudge{key: key, probes: rows.Probes()}
}

// nudgeRows queues nudge_rmsnorm on rows 0..rows-1 of x, rowsAWarp rows
// to each of blocks blocks, with the oracle target's schedule (under do).
func (rmsnormKernel) nudgeRows(d *Device, x *buffer, blocks, rows, cols int, dt oracle.DType, n *rowNudge) error {
	if len(n.probes) == 0 {
		return nil
	}
	s := target.OracleRMSNormSchedule
	r := s.Reduce
	if r.Threads > 32 {
		return fmt.Errorf("gpu: nudge rmsnorm rows: schedule %v has more than one warp of threads", s)
	}
	probes, err := d.uploadInts(n.probes, false)
	if err != nil {
		return err
	}
	defer d.pool.put(probes)
	butterfly := 0
	if r.Warp == oracle.WarpButterfly {
		butterfly = 1
	}
	return d.launch("nudge_rmsnorm", blocks, 1, 32*rowsAWarp, ptrArg(x), ptrArg(n.w), ptrArg(probes),
		arg(len(n.probes)), arg(rows), arg(cols), arg(dt), arg(n.key.out), arg(n.key.eps), arg(r.Threads), arg(r.Vec),
		arg(butterfly), arg(s.Order), arg(0))
}
