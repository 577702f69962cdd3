// Package detect measures detection power: how many generated cases, and
// how many seconds, a relation needs to find each drift model with plain
// random inputs (Dist normal) and with boundary-seeking inputs (Dist
// boundary), comparing outputs only (fuzz.WithoutTaps). It also registers
// the order-only drift models that package fuzz lacks (drift-order-*).
// docs/detection.md holds the measured table and the command.
package detect

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// LogProbBlockRows is the row count from which drift-order-logprob-rows132
// gives each row one warp instead of a 1024-thread block.
const LogProbBlockRows = fuzz.SMs

// logprobBlock is a 1024-thread block per row, 4-wide loads.
var logprobBlock = oracle.LogProbSchedule{Reduce: oracle.Reduction{Threads: 1024, Vec: 4,
	Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}}

// LogProbRows132 is the policy of drift-order-logprob-rows132, a
// log-softmax kernel whose launch gives each row a whole 1024-thread block
// while the rows do not fill the GPU's 132 SMs and one warp per row once
// they do (the shape-chosen block size of softmax kernels, here keyed on
// the row count, which is what makes it batch-dependent):
//
//	rows <  132: threads=1024 vec=4 (the max and the sum of exponentials)
//	rows >= 132: threads=32   vec=4 (fuzz.OracleLogProbSchedule, declared)
//
// Only the order of the fp32 max and sum reductions changes (max is
// exact, so only the sum's rounding moves); log-probs stay fp32 and are
// compared in the case's compare dtype (bf16 in the detection table).
func LogProbRows132(b *fuzz.Batch) oracle.LogProbSchedule {
	if b.Rows() >= LogProbBlockRows {
		return fuzz.OracleLogProbSchedule
	}
	return logprobBlock
}

// orderTarget is a CPU drift model: the oracle with the schedule policy
// chooses for the whole batch.
type orderTarget struct {
	info   fuzz.Info
	policy func(*fuzz.Batch) oracle.LogProbSchedule
}

func (t *orderTarget) Info() fuzz.Info { return t.info }

// Run computes the selected rows' fp32 log-probs with the schedule the
// policy picks for b, with taps [row max, sum of exponentials] as the
// oracle target gives.
func (t *orderTarget) Run(ctx context.Context, b *fuzz.Batch, rows []int) (*fuzz.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.Op != spec.OpLogProb || b.LogProb == nil {
		return nil, fmt.Errorf("target %s runs logprob, not %s", t.info.Name, b.Op)
	}
	sel := b.Rows0(rows)
	y, taps, err := oracle.LogProbTaps(*b.LogProb, t.policy(b), sel)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.info.Name, err)
	}
	o := &fuzz.Output{Rows: sel, Cols: b.Cols(), DType: b.OutDType(), Values: y, TapCols: 2}
	o.Taps = make([]float32, 0, 2*len(taps))
	for _, tp := range taps {
		o.Taps = append(o.Taps, tp.Max, tp.SumExp)
	}
	return o, nil
}

// OrderModels lists the drift models whose only change is the order of an
// fp32 reduction (the output rounding is the same): package fuzz's and
// this package's.
var OrderModels = []string{"drift-rmsnorm-te-mod32", "drift-rmsnorm-vllm-256", "drift-gemm-splitk-by-m", "drift-order-logprob-rows132"}

func init() {
	t := &orderTarget{
		info: fuzz.Info{Name: "drift-order-logprob-rows132", Op: spec.OpLogProb, Device: "cpu",
			Schedule: fuzz.OracleLogProbSchedule.String(),
			Models:   "a log-softmax kernel whose block size follows the launch shape: 1024 threads per row below 132 rows (the H200's SMs), one warp per row from 132 on; only the fp32 sum of exponentials changes order",
			Expect:   []string{spec.RelBatchInvariance, spec.RelPadding, spec.RelOracleParity}},
		policy: LogProbRows132,
	}
	fuzz.Register(t.info.Name, func() (fuzz.Target, error) { return t, nil })
}
