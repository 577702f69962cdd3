//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"slices"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/gemm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/values"
)

// GEMMHeld is a gemm batch kept on the device for a scan: X (M x K) and W
// (K x N) are uploaded once by HoldGEMM, and Run and Alone compute batches
// made of X's rows with no further upload, each queued, not waited for.
// Every launch is the target's own for a batch of that many rows: for a
// GPU target (cuda-gemm, the gemm drift models) the gemm kernel with the
// schedule the target's policy chooses for that M (Device.gemmOn, as
// Target.Run launches it); for a cuBLAS target the cuBLAS call of its Run
// with m = that M (cublasTarget.gemmOn: same handle, dtypes, compute type,
// algorithm and workspace). The outputs stay on the device, so a scan
// compares them there.
type GEMMHeld struct {
	name    string // the target's
	d       *Device
	m, k, n int          // the held batch: M x K rows of X, K x N of W
	ab, c   oracle.DType // the dtypes the launch reads (X, W) and writes (the output)
	x, w    *buffer
	// mul queues y = x·w for m rows of x (rs: x's selected rows, or nil
	// for rows 0..m-1 in order) with the target's launch for an m-row
	// batch (under do); selects says it reads rs (else rs must be nil and
	// Run gathers first).
	mul     func(x, rs, y *buffer, m int) error
	selects bool
	// warm prepares the launches of batches of sizes ms (cuBLAS:
	// warmShapes); nil for a launch that needs nothing.
	warm     func(ms []int) error
	released bool
}

// HoldGEMM uploads gemm batch b for t: a GPU target of op gemm (Target) or
// a cuBLAS target whose output cuBLAS writes in the batch's output dtype
// (cublas-gemmex with C in the input dtype or fp32, cublas-sgemm with fp32
// out). Any other target or batch is not held (the error wraps
// target.ErrUnsupported): a cuBLAS output rounded on the host to another
// dtype, and a lazy batch, scan through Run.
func HoldGEMM(t target.Target, b *target.Batch) (*GEMMHeld, error) {
	g, ok := b.Input.(*oracle.GEMMInput)
	if b.Op != (gemm.Op{}).Name() || !ok || g == nil || b.Lazy() {
		return nil, fmt.Errorf("gpu: hold a %s batch as gemm: %w", b.Op, target.ErrUnsupported)
	}
	h, err := newGEMMHeld(t, b.In, g.Out, g.M, g.K, g.N)
	if err != nil {
		return nil, err
	}
	if err := ops.FirstErr(need("x", len(g.X), g.M*g.K), need("w", len(g.W), g.K*g.N)); err != nil {
		return nil, fmt.Errorf("gpu: hold: %w", err)
	}
	d := h.d
	err = d.do(func() (err error) {
		if h.x, err = d.upload(h.ab, g.X); err != nil {
			return err
		}
		h.w, err = d.upload(h.ab, g.W)
		return err
	})
	return heldOrReleased(h, h.name, err)
}

// HoldGEMMCase holds the largest batch of gemm case c for t with X and W
// made on the device from their recipes x and w (inputs.GEMMTensors): W is
// gen_values of w, K rows of N (row k keyed k); X is gen_values of x, the
// case's M = Rows rows of K (row i keyed i), and for a boundary case those
// rows nudged on the device (nudge_gemm, with the case's seed and the W
// just made), the bits inputs.Of(c) makes on the host. Nothing is
// generated or encoded on the host, and nothing uploaded but the
// launches' arguments. The targets are HoldGEMM's, and the launch must
// read the case's input dtype (cublas-sgemm's fp32 widening of a bf16 or
// fp16 case is not held: HoldGEMM it from the host's batch); any other is
// refused with an error wrapping target.ErrUnsupported.
func HoldGEMMCase(t target.Target, c spec.Case, x, w values.Tensor) (*GEMMHeld, error) {
	if c.Op != (gemm.Op{}).Name() {
		return nil, fmt.Errorf("gpu: hold a %s case as gemm: %w", c.Op, target.ErrUnsupported)
	}
	out, err := oracle.ParseDType(string(c.Out))
	if err != nil {
		return nil, fmt.Errorf("gpu: hold a gemm case: output dtype: %w", err)
	}
	m, k, n := c.Shape.Rows, c.Shape.Hidden, c.Shape.N
	h, err := newGEMMHeld(t, x.DType, out, m, k, n)
	if err != nil {
		return nil, err
	}
	if h.ab != x.DType || w.DType != x.DType {
		h.Release()
		return nil, fmt.Errorf("gpu: hold for %s: it reads %s, the case's tensors are %s and %s: %w", h.name, h.ab, x.DType, w.DType, target.ErrUnsupported)
	}
	xcode, err := values.DistCode(x.Dist)
	if err != nil {
		h.Release()
		return nil, fmt.Errorf("gpu: hold for %s: X: %w", h.name, err)
	}
	wcode, err := values.DistCode(w.Dist)
	if err != nil {
		h.Release()
		return nil, fmt.Errorf("gpu: hold for %s: W: %w", h.name, err)
	}
	d, size := h.d, dsize(h.ab)
	err = d.do(func() (err error) {
		if h.w, err = d.pool.get(k * n * size); err != nil {
			return err
		}
		if err := d.launchGen(h.w, w, wcode, RowKeys{}, 0, k, n); err != nil {
			return err
		}
		if h.x, err = d.pool.get(m * k * size); err != nil {
			return err
		}
		if err := d.launchGen(h.x, x, xcode, RowKeys{}, 0, m, k); err != nil {
			return err
		}
		if x.Dist != spec.DistBoundary {
			return nil
		}
		nd := &rowNudge{key: nudgeKey{op: gemm.Op{}.Name(), out: out}, seed: c.Seed, n: n, w: h.w}
		return d.nudgeRows(h.x, m, k, h.ab, nd)
	})
	if err != nil {
		h.Release()
		return nil, fmt.Errorf("gpu: hold for %s, generate X and W: %w", h.name, err)
	}
	return h, nil
}

// newGEMMHeld returns t's held gemm of m x k rows of X (input dtype in)
// and k x n of W, output dtype out, with no buffers yet: its launch (mul),
// the dtypes the launch reads and writes, and its device.
func newGEMMHeld(t target.Target, in, out oracle.DType, m, k, n int) (*GEMMHeld, error) {
	h := &GEMMHeld{name: t.Info().Name, m: m, k: k, n: n}
	switch t := t.(type) {
	case *Target:
		if t.info.Op != (gemm.Op{}).Name() {
			return nil, fmt.Errorf("gpu: hold a gemm batch for %s (%s): %w", t.info.Name, t.info.Op, target.ErrUnsupported)
		}
		if (n+255)/256 > 65535 {
			return nil, fmt.Errorf("gpu: hold: n %d too large for one launch: %w", n, oracle.ErrShape)
		}
		h.d, h.ab, h.c, h.selects = t.dev, in, out, true
		sizes := oracle.GEMMInput{K: k, N: n, Out: out}
		h.mul = func(x, rs, y *buffer, m int) error {
			sizes.M = m
			s, err := scheduleOf[oracle.GEMMSchedule](t.policy(&target.Batch{Op: gemm.Op{}.Name(), In: in, Out: out, Input: &sizes}))
			if err == nil {
				err = s.Validate()
			}
			if err != nil {
				return fmt.Errorf("%s at m %d: %w", t.info.Name, m, err)
			}
			return h.d.gemmOn(x, h.w, rs, y, m, h.k, h.n, h.ab, h.c, s)
		}
	case *cublasTarget:
		ab, c := t.dtypes(in, out)
		if c != out {
			return nil, fmt.Errorf("gpu: hold for %s: %s output is rounded on the host: %w", t.info.Name, out, target.ErrUnsupported)
		}
		bh, err := t.d.blas()
		if err != nil {
			return nil, err
		}
		h.d, h.ab, h.c = t.d, ab, c
		h.mul = func(x, _, y *buffer, m int) error { return t.gemmOn(bh, x, h.w, y, m, h.n, h.k, h.ab, h.c) }
		if t.ex {
			h.warm = func(ms []int) error { return h.warmOn(bh, t, ms) }
		}
	default:
		return nil, fmt.Errorf("gpu: %s is not a GPU gemm target: %w", t.Info().Name, target.ErrUnsupported)
	}
	if m < 1 || k < 1 || n < 1 {
		return nil, fmt.Errorf("gpu: hold m %d k %d n %d: %w", m, k, n, oracle.ErrShape)
	}
	return h, nil
}

// Warm prepares the target's launches for batches of each size of sizes
// (1..the held rows) before they are run one at a time: cublas-gemmex
// makes its slow first call at each shape on several threads at once
// (warmShapes); any other target needs nothing. Outputs are unchanged.
func (h *GEMMHeld) Warm(ctx context.Context, sizes []int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if h.released {
		return fmt.Errorf("gpu: %s: warm a released batch", h.name)
	}
	for _, m := range sizes {
		if m < 1 || m > h.m {
			return fmt.Errorf("gpu: %s: warm a batch of %d rows, want 1..%d", h.name, m, h.m)
		}
	}
	if h.warm == nil {
		return nil
	}
	return h.warm(sizes)
}

// warmOn runs warmShapes for sizes ms with t's cuBLAS call on handle bh,
// x the held X and y one scratch output of max(ms) rows.
func (h *GEMMHeld) warmOn(bh *blasHandle, t *cublasTarget, ms []int) error {
	var y *buffer
	err := h.d.do(func() (err error) {
		y, err = h.d.pool.get(slices.Max(ms) * h.n * dsize(h.c))
		return err
	})
	if err != nil {
		return fmt.Errorf("gpu: %s: warm: %w", h.name, err)
	}
	defer h.d.locked(func() { h.d.pool.put(y) })
	return warmShapes(h.d, ms, func(m int) error { return t.gemmOn(bh, h.x, h.w, y, m, h.n, h.k, h.ab, h.c) })
}

// Release returns the held buffers to the device's pool.
func (h *GEMMHeld) Release() {
	h.d.locked(func() { h.d.pool.put(h.x, h.w) })
	h.x, h.w, h.released = nil, nil, true
}

// Run computes the batch whose row i is held row ids[i], M = len(ids): a
// prefix (ids 0..M-1) reads the held rows in place; any other list is read
// through the gemm kernel's row selection (a GPU target) or gathered into
// a scratch batch first, one device copy per run of consecutive ids (a
// cuBLAS target). Nothing is waited for.
func (h *GEMMHeld) Run(ctx context.Context, ids []int) (*target.Output, error) {
	prefix, err := heldRun(ctx, h.released, ids, h.m)
	if err != nil {
		return nil, err
	}
	m, d := len(ids), h.d
	o := &target.Output{Rows: spec.Iota(m), Cols: h.n, DType: h.c}
	out := newDevOut(d, m, h.n, h.c)
	o.Device = out
	err = d.do(func() error {
		var err error
		if out.buf, err = d.pool.get(m * h.n * dsize(h.c)); err != nil {
			return err
		}
		if m == 0 {
			return nil
		}
		if prefix {
			return h.mul(h.x, nil, out.buf, m)
		}
		if h.selects {
			rs, err := d.uploadInts(ids, false)
			if err != nil {
				return err
			}
			defer d.pool.put(rs)
			return h.mul(h.x, rs, out.buf, m)
		}
		g, err := d.gatherRows(h.x, ids, h.k*dsize(h.ab))
		if err != nil {
			return err
		}
		defer d.pool.put(g)
		return h.mul(g, nil, out.buf, m)
	})
	if err != nil {
		o.Release()
		return nil, fmt.Errorf("gpu: %s, a batch of %d rows: %w", h.name, m, err)
	}
	return o, nil
}

// Alone computes held rows 0..n-1 each as a batch of one row (M = 1), into
// one output in row order: n launches, launch i reading X's row i in place
// and writing the output's row i; for a cuBLAS target whose rows are not
// each at a multiple of allocAlign bytes, launch i reads a copy of row i
// in an aligned scratch row and writes another, copied to row i.
func (h *GEMMHeld) Alone(ctx context.Context, n int) (*target.Output, error) {
	if err := heldAlone(ctx, h.released, n, h.m); err != nil {
		return nil, err
	}
	d := h.d
	o := &target.Output{Rows: spec.Iota(n), Cols: h.n, DType: h.c}
	out := newDevOut(d, n, h.n, h.c)
	o.Device = out
	xrow, yrow := h.k*dsize(h.ab), h.n*dsize(h.c)
	err := d.do(func() error {
		var err error
		if out.buf, err = d.pool.get(n * yrow); err != nil {
			return err
		}
		if h.selects || (xrow%allocAlign == 0 && yrow%allocAlign == 0) {
			for i := range n {
				if err := h.mul(atOffset(h.x, i*xrow), nil, atOffset(out.buf, i*yrow), 1); err != nil {
					return fmt.Errorf("row %d alone: %w", i, err)
				}
			}
			return nil
		}
		// cuBLAS chooses its kernel by the pointers' alignment too: a row
		// not at an allocation's alignment runs from aligned scratch rows,
		// as Run's freshly allocated one-row batch does.
		xs, err := d.pool.get(xrow)
		if err != nil {
			return err
		}
		ys, err := d.pool.get(yrow)
		if err != nil {
			d.pool.put(xs)
			return err
		}
		defer d.pool.put(xs, ys)
		for i := range n {
			if err := cu.MemcpyDtoDAsync(xs.ptr, h.x.ptr+cu.DevicePtr(i*xrow), int64(xrow), d.stream); err != nil {
				return fmt.Errorf("row %d alone: %w", i, err)
			}
			if err := h.mul(xs, nil, ys, 1); err != nil {
				return fmt.Errorf("row %d alone: %w", i, err)
			}
			if err := cu.MemcpyDtoDAsync(out.buf.ptr+cu.DevicePtr(i*yrow), ys.ptr, int64(yrow), d.stream); err != nil {
				return fmt.Errorf("row %d alone: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		o.Release()
		return nil, fmt.Errorf("gpu: %s, rows alone: %w", h.name, err)
	}
	return o, nil
}

// enqueuePrefix queues the batch of held rows 0..v-1 (M = v, read in
// place) into out, v x N values of the output dtype, with the launch Run
// makes for that prefix, and returns without waiting (under do). A gemm
// has no taps: taps must be nil.
func (h *GEMMHeld) enqueuePrefix(v int, out, taps *buffer) error {
	if err := heldPrefix(h.released, v, h.m); err != nil {
		return err
	}
	if taps != nil {
		return fmt.Errorf("gpu: %s has no taps", h.name)
	}
	return h.mul(h.x, nil, out, v)
}

// allocAlign is the alignment of every device allocation (cuMemAlloc
// gives at least 256 bytes), which a pooled buffer's start has.
const allocAlign = 256

// atOffset is the device address off bytes into b, as a buffer the
// callee only reads or writes (never puts back in the pool).
func atOffset(b *buffer, off int) *buffer { return &buffer{ptr: b.ptr + cu.DevicePtr(off)} }

// gatherRows copies rows ids of src (rb bytes a row) into a new pooled
// buffer in order, one device-to-device copy per run of consecutive ids,
// on the lane's stream (under do). The caller puts it back.
func (d *Device) gatherRows(src *buffer, ids []int, rb int) (*buffer, error) {
	g, err := d.pool.get(len(ids) * rb)
	if err != nil {
		return nil, err
	}
	err = runs(ids, func(i, j int) error {
		if err := cu.MemcpyDtoDAsync(g.ptr+cu.DevicePtr(i*rb), src.ptr+cu.DevicePtr(ids[i]*rb), int64((j-i)*rb), d.stream); err != nil {
			return fmt.Errorf("gpu: gather held rows: %w", err)
		}
		return nil
	})
	if err != nil {
		d.pool.put(g)
		return nil, err
	}
	return g, nil
}
