//go:build cuda

package gpu

import (
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/gemm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// gemmKernel is op gemm on the device: kernel gemm (kernels/gemm.cu), and
// nudge_gemm (kernels/nudge.cu) for the rows of a boundary case.
type gemmKernel struct{ gemm.Op }

func (gemmKernel) launch(d *Device, b *target.Batch, sched oracle.Schedule, rows, sel []int, _ *target.Output, out *devOut, _ bool) (func() error, error) {
	in, s, err := opArgs[oracle.GEMMInput, oracle.GEMMSchedule](b, sched)
	if err != nil {
		return nil, err
	}
	dt := b.In
	if in.M < 0 || in.K < 1 || in.N < 1 {
		return nil, fmt.Errorf("m %d k %d n %d: %w", in.M, in.K, in.N, oracle.ErrShape)
	}
	if err := ops.FirstErr(needItems(b, "x", len(in.X), in.M*in.K), need("w", len(in.W), in.K*in.N)); err != nil {
		return nil, err
	}
	if (in.N+255)/256 > 65535 {
		return nil, fmt.Errorf("n %d too large for one launch: %w", in.N, oracle.ErrShape)
	}
	xb, wb := encoded(dt, in.X), encoded(dt, in.W)
	nudge := newGEMMNudge(b, in, wb)
	return func() error {
		n := len(sel)
		x, w, rs, err := d.weightedInput(b, xb, wb, in.K, rows, sel, nudge)
		if err != nil {
			return err
		}
		defer d.pool.put(x, w, rs)
		if out.buf, err = d.pool.get(n * in.N * dsize(in.Out)); err != nil {
			return err
		}
		return d.gemmOn(x, w, rs, out.buf, n, in.K, in.N, dt, in.Out, s)
	}, nil
}

// gemmOn launches the gemm kernel on inputs already on the device (x: the
// batch, k values a row; w: k x n; rs: the selected rows or nil for n rows
// in order) into y, rows x n values, without waiting (under do).
func (d *Device) gemmOn(x, w, rs, y *buffer, rows, k, n int, dt, outDT oracle.DType, s oracle.GEMMSchedule) error {
	block := min(256, (n+31)/32*32)
	return d.launch("gemm", rows, (n+block-1)/block, block, ptrArg(x), ptrArg(w), ptrArg(y), ptrArg(rs),
		arg(k), arg(n), arg(dt), arg(outDT), arg(s.SplitK), arg(s.Combine))
}

// newGEMMNudge returns the nudge of lazy batch b (gemm input in, W
// encoded as wb) when its case is of the boundary distribution, else nil.
func newGEMMNudge(b *target.Batch, in *oracle.GEMMInput, wb []byte) *rowNudge {
	if !boundaryLazy(b) {
		return nil
	}
	return gemmNudge(in, b.Source.Case.Seed, wb)
}

// gemmNudge is the nudge of the gemm rows of the case with that seed, with
// input in's W (encoded as wb) and output dtype.
func gemmNudge(in *oracle.GEMMInput, seed uint64, wb []byte) *rowNudge {
	key := nudgeKey{op: gemm.Op{}.Name(), w: hashWeights(wb), out: in.Out}
	return &rowNudge{key: key, seed: seed, n: in.N}
}

// nudgeRows queues nudge_gemm on rows 0..rows-1 of x, rowsAWarp rows to
// each of blocks blocks, with the oracle target's schedule (under do).
func (gemmKernel) nudgeRows(d *Device, x *buffer, blocks, rows, cols int, dt oracle.DType, n *rowNudge) error {
	if s := target.OracleGEMMSchedule; s.SplitK != 1 || s.MMA != oracle.MMANone {
		return fmt.Errorf("gpu: nudge gemm rows: schedule %v is not one fma chain", s)
	}
	if cols < 4 || n.key.out == oracle.FP32 { // GEMMRow's own limits: nothing to nudge
		return nil
	}
	wcols, err := d.pool.get(4 * rows * cols)
	if err != nil {
		return err
	}
	defer d.pool.put(wcols)
	return d.launch("nudge_gemm", blocks, 1, 32*rowsAWarp, ptrArg(x), ptrArg(n.w), ptrArg(wcols), arg(rows), arg(cols),
		arg(n.n), arg(dt), arg(n.key.out), n.seed, arg(0))
}
