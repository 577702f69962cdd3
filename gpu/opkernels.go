//go:build cuda

package gpu

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// opKernel is an op of ops/all.Cases on the device: the op's package
// (embedded: its name, its oracle schedule, whether it is a token op)
// and our CUDA kernel of it. Each lives in its file, gpu/op_<op>.go.
type opKernel interface {
	ops.CaseOp
	// launch checks b, an input of the op, and s, its schedule, and
	// returns the call (run under do) that puts b's inputs on d and queues
	// the kernels computing rows sel of b (rows: the caller's selection,
	// nil for all) into out, and the op's fp32 taps into o; attention
	// writes its taps only when attnTaps is set (Device.run).
	launch(d *Device, b *target.Batch, s oracle.Schedule, rows, sel []int, o *target.Output, out *devOut, attnTaps bool) (func() error, error)
}

// rowNudger is an opKernel whose boundary rows the device nudges
// (nudge.go): rmsnorm and gemm. The other ops' nudges run on the host.
type rowNudger interface {
	// nudgeRows queues the nudge of rows 0..rows-1 of x (cols values of
	// dtype dt each) with n, rowsAWarp rows a block of blocks (under do).
	nudgeRows(d *Device, x *buffer, blocks, rows, cols int, dt oracle.DType, n *rowNudge) error
}

// opKernels lists the op kernels, one for each op of ops/all.Cases, in its
// order: a new op's kernel is added here and nowhere else.
var opKernels = []opKernel{
	rmsnormKernel{},
	gemmKernel{},
	logprobKernel{},
	prefillKernel{},
	decodeKernel{},
}

// kernelOf returns the kernel of op; ok is false for an op with none.
func kernelOf(op spec.Op) (k opKernel, ok bool) {
	for _, k := range opKernels {
		if k.Name() == op {
			return k, true
		}
	}
	return nil, false
}

// nudgerOf returns the kernel of op when the device nudges its boundary
// rows; ok is false for any other op.
func nudgerOf(op spec.Op) (n rowNudger, ok bool) {
	k, _ := kernelOf(op)
	n, ok = k.(rowNudger)
	return n, ok
}
