//go:build cuda

package gpu

import (
	"fmt"
	"hash/maphash"
	"math"

	"github.com/bitparity/bitparity/fuzz/boundary"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Boundary rmsnorm rows are nudged on the device (kernels/nudge.cu): the
// batch's rows are generated as the normal distribution, then each row is
// nudged by one warp running nudge.cuh's nd_rmsnorm_row, the arithmetic of
// boundary.RMSNormRows.Nudge with the oracle target's schedule
// (target.OracleRMSNormSchedule), which fuzz/boundary's TestCMatchesGo
// checks in C and TestDeviceNudge on the device. The probes depend on the
// weights alone and are found on the host, once a batch.

// nudgeKey is what a nudged tensor depends on besides its generated rows:
// the weights (a hash of their bits), eps and the output dtype. The zero
// key is "not nudged".
type nudgeKey struct {
	w   uint64
	eps uint32 // bits
	out oracle.DType
}

// rmsNudge is the nudge of one boundary rmsnorm batch's rows: its key,
// the probes and the weights on the device (set under do).
type rmsNudge struct {
	key    nudgeKey
	probes []int
	w      *buffer
}

// wSeed seeds the weights' hash (nudgeKey.w): keys live in one process.
var wSeed = maphash.MakeSeed()

// newRMSNudge returns the nudge of lazy batch b (rmsnorm input in, dtype
// dt, weights encoded as wb) when its case is of the boundary
// distribution, else nil. A batch whose rows get no nudge (an fp32
// output, hidden below 8, no normal weight) has a key and no probes: its
// rows are the generator's as they are.
func newRMSNudge(b *target.Batch, in *oracle.RMSNormInput, dt oracle.DType, wb []byte) *rmsNudge {
	if !b.Lazy() || b.Source.Case.Dist != spec.DistBoundary {
		return nil
	}
	rows := boundary.NewRMSNormRows(in.W, in.Eps, dt, in.Out, target.OracleRMSNormSchedule)
	key := nudgeKey{w: hashWeights(wb), eps: math.Float32bits(in.Eps), out: in.Out}
	return &rmsNudge{key: key, probes: rows.Probes()}
}

// hashWeights is nudgeKey.w of the encoded weights wb: never 0.
func hashWeights(wb []byte) uint64 { return maphash.Bytes(wSeed, wb) | 1 }

// nudgeRMSNorm queues the nudge of rows 0..rows-1 of x (cols values of
// dtype dt each; row r is item r, odd items aim at the odd side) on the
// lane's stream (under do), one warp a row.
func (d *Device) nudgeRMSNorm(x *buffer, rows, cols int, dt oracle.DType, n *rmsNudge) error {
	if len(n.probes) == 0 || rows == 0 {
		return nil
	}
	if n.w == nil {
		return fmt.Errorf("gpu: nudge rmsnorm rows: no weights on the device")
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
	const warps = 4 // rows a block
	butterfly := 0
	if r.Warp == oracle.WarpButterfly {
		butterfly = 1
	}
	return d.launch("nudge_rmsnorm", (rows+warps-1)/warps, 1, 32*warps, ptrArg(x), ptrArg(n.w), ptrArg(probes),
		arg(len(n.probes)), arg(rows), arg(cols), arg(dt), arg(n.key.out), arg(n.key.eps), arg(r.Threads), arg(r.Vec),
		arg(butterfly), arg(s.Order), arg(0))
}
