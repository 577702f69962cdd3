package target

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Row drift models are the negative controls whose path is chosen per row,
// not per batch: a real kernel's tail tile, second wave, stream-K fixup or
// atomic combine gives some rows of a batch another reduction order than
// the others, by their position and the batch's size. They are scan
// controls (Info.OnRequest): a campaign runs them where --targets names
// them, and `bitparity scan` must map each exactly and never certify it
// (scan/controls_test.go).

// Thresholds of the row drift models.
const (
	// OneRowFrom is the batch size from which drift-rmsnorm-one-row-300
	// reduces its row OneRowFrom-1 another way.
	OneRowFrom = 300
	// TailTileFrom and TailTile: from TailTileFrom rows on, the rows past
	// the last multiple of TailTile take the remainder path.
	TailTileFrom = 900
	TailTile     = 64
	// SecondWave is the number of rows one wave of resident blocks covers
	// (2 blocks on each of the H200's 132 SMs): the rows at positions >=
	// SecondWave of a larger batch run in the second wave.
	SecondWave = 2 * SMs
	// NondeterministicFrom is the batch size from which
	// drift-rmsnorm-atomic-128 combines each row's two halves by atomicAdd.
	NondeterministicFrom = 128
)

// CaptureBuckets are the CUDA-graph capture sizes of
// drift-rmsnorm-capture-buckets: vLLM's default list, 1, 2, 4, then every
// multiple of 8 up to 256 and every multiple of 16 up to 512; a larger
// batch runs eagerly (unpadded).
func CaptureBuckets() []int {
	bs := []int{1, 2, 4}
	for n := 8; n < 256; n += 8 {
		bs = append(bs, n)
	}
	for n := 256; n <= 512; n += 16 {
		bs = append(bs, n)
	}
	return bs
}

// captureBucket is the size a batch of n rows is padded to: the smallest
// capture size >= n, or n past the largest.
func captureBucket(n int) int {
	for _, b := range CaptureBuckets() {
		if b >= n {
			return b
		}
	}
	return n
}

// OneRow is the policy of drift-rmsnorm-one-row-300, a persistent kernel
// with stream-K style work splitting: once a batch reaches OneRowFrom rows
// the work no longer divides evenly over the resident blocks, and the one
// row whose work straddles the first wave's end (row OneRowFrom-1) is
// reduced by two blocks and fixed up; every other row keeps its path:
//
//	rows >= 300, row 299: threads=64 vec=8 (rmsWide)
//	otherwise:            threads=32 vec=4 (declared)
func OneRow(b *Batch, row int) oracle.Schedule {
	if b.Rows() >= OneRowFrom && row == OneRowFrom-1 {
		return rmsWide
	}
	return OracleRMSNormSchedule
}

// TailTileRows is the policy of drift-rmsnorm-tail-tile-64, a tiled kernel
// whose tuned configuration (chosen from TailTileFrom rows on) processes
// tiles of TailTile rows with vectorised loads and leaves the last partial
// tile to a masked, scalar epilogue:
//
//	rows >= 900, row >= 64*floor(rows/64): threads=256 vec=1 (rmsBlock256)
//	otherwise:                             threads=32  vec=4 (declared)
func TailTileRows(b *Batch, row int) oracle.Schedule {
	n := b.Rows()
	if n >= TailTileFrom && row >= n/TailTile*TailTile {
		return rmsBlock256
	}
	return OracleRMSNormSchedule
}

// SecondWaveRows is the policy of drift-rmsnorm-second-wave-264, a
// persistent kernel with SecondWave resident blocks whose rows past the
// first wave are picked up by blocks that finished early and split the
// reduction with a neighbour (a split-row second wave):
//
//	rows > 264, row >= 264: threads=64 vec=8 (rmsWide)
//	otherwise:              threads=32 vec=4 (declared)
func SecondWaveRows(b *Batch, row int) oracle.Schedule {
	if b.Rows() > SecondWave && row >= SecondWave {
		return rmsWide
	}
	return OracleRMSNormSchedule
}

// CaptureBucketRows is the policy of drift-rmsnorm-capture-buckets: an
// engine replays a CUDA graph captured at the padded size (CaptureBuckets)
// and the kernel inside it, vLLM's rms_norm, chose its block size when the
// graph was captured, by the padded row count:
//
//	bucket(rows) < 256:  threads=1024 vec=1 (declared)
//	bucket(rows) >= 256: threads=256  vec=1
//
// so batches of 249..255 rows, padded to 256, already take the 256-thread
// path.
func CaptureBucketRows(b *Batch, _ int) oracle.Schedule {
	if captureBucket(b.Rows()) >= 256 {
		return rmsBlock256
	}
	return rmsBlock1024
}

// atomicOrders are two orders in which drift-rmsnorm-atomic-128's
// partial sums of a row reach the accumulator (fp32 addition is
// commutative, so two partials would always agree; these trees differ
// from three non-zero partials on, that is from hidden 3): lanes by a
// butterfly and warps in turn, or lanes in turn and warps pairwise.
var atomicOrders = [2]oracle.Schedule{
	oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 128, Vec: 1, Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential},
		Order: oracle.ScaleThenWeight},
	oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 128, Vec: 1, Warp: oracle.WarpSequential, Cross: oracle.CrossTree},
		Order: oracle.ScaleThenWeight},
}

// atomicRuns counts the runs of drift-rmsnorm-atomic-128: each run's
// arrival orders differ from the last's.
var atomicRuns atomic.Uint64

// AtomicPartials is the policy of drift-rmsnorm-atomic-128, a kernel that
// from NondeterministicFrom rows on splits each row over four blocks and
// combines their partial sums of squares with atomicAdd (the split-K
// "atomic" combine of cuBLAS and of FlashDecoding's reduce): the order in
// which the partials arrive decides the fp32 rounding, and it varies from
// run to run. The model draws each row's order from the run's number and
// the row (splitmix), so two runs of the same batch take other orders in
// about half their rows:
//
//	rows >= 128: threads=128 vec=1, one of atomicOrders, drawn per row and run
//	otherwise:   threads=32  vec=4 (declared)
func AtomicPartials(run uint64) func(b *Batch, row int) oracle.Schedule {
	return func(b *Batch, row int) oracle.Schedule {
		if b.Rows() < NondeterministicFrom {
			return OracleRMSNormSchedule
		}
		return atomicOrders[mix(run^uint64(row)*0x9e3779b97f4a7c15)&1]
	}
}

// mix is splitmix64's finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// rowScheduled is a CPU target whose policy chooses the schedule of each
// row of a batch: the oracle runs each group of rows with its schedule.
type rowScheduled struct {
	info Info
	// policy returns the schedule of a run: per row of the batch.
	policy func() func(b *Batch, row int) oracle.Schedule
}

func (t *rowScheduled) Info() Info { return t.info }

// Run computes the selected rows, each with the schedule the run's policy
// gives it in b (which depends on b and the row's position, never on
// which rows are selected).
func (t *rowScheduled) Run(ctx context.Context, b *Batch, rows []int) (*Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.Op != t.info.Op {
		return nil, fmt.Errorf("target %s runs %s, not %s", t.info.Name, t.info.Op, b.Op)
	}
	sel := b.Rows0(rows)
	policy := t.policy()
	groups := map[string][]int{} // schedule -> indices into sel
	sched := map[string]oracle.Schedule{}
	var order []string
	for i, r := range sel {
		s := policy(b, r)
		k := s.String()
		if _, ok := sched[k]; !ok {
			sched[k] = s
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	var o *Output
	for _, k := range order {
		idx := groups[k]
		part := make([]int, len(idx))
		for j, i := range idx {
			part[j] = sel[i]
		}
		g, err := RunOracle(b, sched[k], part)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.info.Name, err)
		}
		if o == nil {
			o = &Output{Rows: sel, Cols: g.Cols, DType: g.DType, TapCols: g.TapCols,
				Values: make([]float32, len(sel)*g.Cols)}
			if g.TapCols > 0 {
				o.Taps = make([]float32, len(sel)*g.TapCols)
			}
		}
		for j, i := range idx {
			copy(o.Values[i*o.Cols:(i+1)*o.Cols], g.Values[j*g.Cols:(j+1)*g.Cols])
			if g.TapCols > 0 {
				copy(o.Taps[i*o.TapCols:(i+1)*o.TapCols], g.Taps[j*g.TapCols:(j+1)*g.TapCols])
			}
		}
	}
	if o == nil { // no rows selected
		return RunOracle(b, t.policy()(b, 0), sel)
	}
	return o, nil
}

// rowDriftModels are the row drift models every build has.
func rowDriftModels() []Target {
	var ts []Target
	drift := func(name, models string, declared oracle.Schedule, policy func() func(*Batch, int) oracle.Schedule) {
		ts = append(ts, &rowScheduled{
			info: Info{Name: name, Op: rmsnorm.Op{}.Name(), Device: "cpu", Schedule: declared.String(),
				Models: models, Expect: []string{spec.RelBatchInvariance}, OnRequest: true},
			policy: policy,
		})
	}
	fixed := func(p func(*Batch, int) oracle.Schedule) func() func(*Batch, int) oracle.Schedule {
		return func() func(*Batch, int) oracle.Schedule { return p }
	}
	drift("drift-rmsnorm-one-row-300",
		"a persistent kernel with stream-K style splitting: from 300 rows on, row 299 (whose work straddles the first wave's end) is reduced by two blocks and fixed up (threads=64 vec=8); every other row keeps threads=32 vec=4",
		OracleRMSNormSchedule, fixed(OneRow))
	drift("drift-rmsnorm-tail-tile-64",
		"a tiled kernel whose tuned configuration (from 900 rows on) leaves the last partial tile of 64 rows to a scalar epilogue: rows past the last multiple of 64 take threads=256 vec=1",
		OracleRMSNormSchedule, fixed(TailTileRows))
	drift("drift-rmsnorm-second-wave-264",
		"a persistent kernel with 264 resident blocks (2 per SM): in a batch of more than 264 rows, the rows at positions >= 264 run in a second wave that splits each row over two blocks (threads=64 vec=8)",
		OracleRMSNormSchedule, fixed(SecondWaveRows))
	drift("drift-rmsnorm-capture-buckets",
		"vLLM rms_norm inside a CUDA graph captured at the padded batch size (capture sizes 1, 2, 4, multiples of 8 to 256, of 16 to 512): the block size (1024 threads below 256, 256 from 256) follows the padded size, so 249..255 rows take the 256-thread path",
		rmsBlock1024, fixed(CaptureBucketRows))
	drift("drift-rmsnorm-atomic-128",
		"a kernel that from 128 rows on splits each row over four blocks and adds their partial sums of squares with atomicAdd: the order of arrival, and with it the bits, changes from run to run (nondeterministic)",
		OracleRMSNormSchedule, func() func(*Batch, int) oracle.Schedule { return AtomicPartials(atomicRuns.Add(1)) })
	return ts
}
