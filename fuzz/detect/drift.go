// Package detect measures detection power: how many generated cases, and
// how many seconds, a relation needs to find each drift model with plain
// random inputs (Dist normal) and with boundary-seeking inputs (Dist
// boundary), comparing outputs only (taps.Off).
// docs/detection.md holds the measured table and the command.
package detect

import (
	"sync"

	"github.com/bitparity/bitparity/ops/logprob"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// OrderModels lists the drift models whose only change is the order of an
// fp32 reduction (the output rounding is the same): package fuzz's and
// this package's.
var OrderModels = []string{"drift-rmsnorm-te-mod32", "drift-rmsnorm-vllm-256", "drift-gemm-splitk-by-m", "drift-order-logprob-rows132"}

// RegisterTargets registers drift-order-logprob-rows132 with
// target.Register, once (later calls do nothing): the command calls it
// before any command runs, so campaigns, list and detect have it. It is
// registered here, not with the drift models every campaign suite must
// find (package target), because it changes only the order of an fp32
// sum, so the detection table measures it (docs/detection.md).
func RegisterTargets() {
	registerOnce.Do(func() {
		info := target.Info{Name: "drift-order-logprob-rows132", Op: logprob.Op{}.Name(), Device: "cpu",
			Schedule: target.OracleLogProbSchedule.String(),
			Models:   "a log-softmax kernel whose block size follows the launch shape: 1024 threads per row below 132 rows (the H200's SMs), one warp per row from 132 on; only the fp32 sum of exponentials changes order",
			Expect:   []string{spec.RelBatchInvariance, spec.RelPadding, spec.RelOracleParity}}
		target.Register(info.Name, func() (target.Target, error) {
			return target.Scheduled(info, func(b *target.Batch) oracle.Schedule { return target.LogProbRows132(b) }), nil
		})
	})
}

var registerOnce sync.Once
