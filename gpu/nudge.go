//go:build cuda

package gpu

import (
	"fmt"
	"hash/maphash"

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
	nd, ok := nudgerOf(n.key.op)
	if !ok {
		return fmt.Errorf("gpu: nudge %s rows: not an op the device nudges", n.key.op)
	}
	return nd.nudgeRows(d, x, blocks, rows, cols, dt, n)
}
