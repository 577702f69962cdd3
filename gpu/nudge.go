//go:build cuda

package gpu

import (
	"fmt"
	"hash/maphash"
	"math"

	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Boundary rmsnorm and gemm rows are nudged on the device
// (kernels/nudge.cu): the batch's rows are generated as the normal
// distribution, then each row is nudged by one warp running nudge.cuh's
// nd_rmsnorm_row or nd_gemm_row, the arithmetic of package boundary's
// RMSNormRows.Nudge and GEMMRow with the oracle target's schedules
// (target.OracleRMSNormSchedule, target.OracleGEMMSchedule), which
// package boundary's TestCMatchesGo checks in C and TestDeviceNudge on the
// device. RMSNorm's probes depend on the weights alone and are found on
// the host, once a batch.

// deviceNudged are the ops whose boundary rows the device nudges.
var deviceNudged = map[spec.Op]bool{spec.OpRMSNorm: true, spec.OpGEMM: true}

// nudgeKey is what a nudged tensor depends on besides its generated rows
// (values.Tensor: seed, dtype; the row length): the op, the weights (a
// hash of their bits), eps and the output dtype. The zero key is "not
// nudged".
type nudgeKey struct {
	op  spec.Op
	w   uint64
	eps uint32 // bits
	out oracle.DType
}

// rowNudge is the nudge of one boundary batch's rows: its key, what the
// kernel reads besides the rows, and the weights on the device (set under
// do).
type rowNudge struct {
	key    nudgeKey
	probes []int  // rmsnorm: boundary.RMSNormRows.Probes
	seed   uint64 // gemm: the case's seed (a row's column)
	n      int    // gemm: W's columns
	w      *buffer
}

// wSeed seeds the weights' hash (nudgeKey.w): keys live in one process.
var wSeed = maphash.MakeSeed()

// hashWeights is nudgeKey.w of the encoded weights wb: never 0.
func hashWeights(wb []byte) uint64 { return maphash.Bytes(wSeed, wb) | 1 }

// boundaryLazy reports whether b is a lazy batch of a boundary case.
func boundaryLazy(b *target.Batch) bool {
	return b.Lazy() && b.Source.Case.Dist == spec.DistBoundary
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
	key := nudgeKey{op: spec.OpRMSNorm, w: hashWeights(wb), eps: math.Float32bits(in.Eps), out: in.Out}
	return &rowNudge{key: key, probes: rows.Probes()}
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
	key := nudgeKey{op: spec.OpGEMM, w: hashWeights(wb), out: in.Out}
	return &rowNudge{key: key, seed: seed, n: in.N}
}

// rowsAWarp are the rows of one block of the nudge kernels (a warp each).
const rowsAWarp = 4

// nudgeRows queues the nudge of rows 0..rows-1 of x (cols values of dtype
// dt each; row r is item r) on the lane's stream (under do), one warp a
// row.
func (d *Device) nudgeRows(x *buffer, rows, cols int, dt oracle.DType, n *rowNudge) error {
	if rows == 0 {
		return nil
	}
	if n.w == nil {
		return fmt.Errorf("gpu: nudge %s rows: no weights on the device", n.key.op)
	}
	blocks := (rows + rowsAWarp - 1) / rowsAWarp
	switch n.key.op {
	case spec.OpRMSNorm:
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
	case spec.OpGEMM:
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
	return fmt.Errorf("gpu: nudge %s rows: not an op the device nudges", n.key.op)
}
