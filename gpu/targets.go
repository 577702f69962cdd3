//go:build cuda

package gpu

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/ops/gemm"
	"github.com/bitparity/bitparity/ops/logprob"
	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Target is a GPU target: our exact kernels running the schedule its
// policy chooses for the batch. The exact targets (cuda-<op>) have a
// constant policy, the oracle target's schedule; the drift models
// (cuda-drift-<model>) use package fuzz's drift policies, so a GPU drift
// model and its CPU twin choose the same schedule for every batch.
type Target struct {
	info   target.Info
	policy func(b *target.Batch) oracle.Schedule
	// rows, set in place of policy for a row drift model (drift_rows.go),
	// gives the policy of a run: a schedule a row.
	rows   func() rowPolicy
	random bool // two runs of a batch may differ (Deterministic)
	dev    *Device
}

// Info describes the target.
func (t *Target) Info() target.Info { return t.info }

// Run uploads b, computes the selected rows (all when rows is nil) with the
// schedule policy(b) chooses, and returns an output that stays on the
// device (target.DeviceOutput); relations compare it there.
func (t *Target) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.Op != t.info.Op {
		return nil, fmt.Errorf("target %s runs %s, not %s", t.info.Name, t.info.Op, b.Op)
	}
	d, err := t.dev.forWorker(ctx)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.info.Name, err)
	}
	var o *target.Output
	if t.rows != nil {
		o, err = t.runByRow(d, b, rows)
	} else {
		o, err = d.Run(b, t.policy(b), rows)
	}
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.info.Name, err)
	}
	return o, nil
}

// Name returns the registry name of op's exact GPU target: cuda-<op>.
func Name(op spec.Op) string { return "cuda-" + string(op) }

// drift is a GPU drift model: the CPU model's name with a cuda- prefix and
// the same policy.
type drift struct {
	name     string
	op       ops.CaseOp
	declared oracle.Schedule
	policy   func(*target.Batch) oracle.Schedule
	models   string
	expect   []string
}

// Drifts lists the GPU drift models. Each must be found by the relations
// in its expect list, exactly as its CPU twin (target/drift.go).
var drifts = []drift{
	{"cuda-drift-rmsnorm-te-mod32", rmsnorm.Op{}, target.OracleRMSNormSchedule, target.TERMSNormMod32,
		"TransformerEngine RMSNorm on the GPU: reduction path chosen by rows % 32 (threads=64 vec=8 when rows % 32 == 0, else threads=32 vec=4)",
		[]string{spec.RelBatchInvariance, spec.RelPadding, spec.RelOracleParity}},
	{"cuda-drift-rmsnorm-vllm-256", rmsnorm.Op{},
		oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 1024, Vec: 1}}, target.VLLMRMSNorm256,
		"vLLM rms_norm on the GPU: 1024-thread blocks below 256 tokens, 256-thread blocks from 256 tokens on",
		[]string{spec.RelBatchInvariance, spec.RelPadding, spec.RelOracleParity}},
	{"cuda-drift-gemm-splitk-by-m", gemm.Op{}, target.OracleGEMMSchedule, target.GEMMSplitKByM,
		"cuBLAS-like split-K chosen by M on the GPU: split-K 4 for M <= 64, none above",
		[]string{spec.RelBatchInvariance, spec.RelPadding, spec.RelOracleParity}},
	{"cuda-drift-decode-splits-by-batch", attention.Decode{}, target.OracleAttentionSchedule, target.DecodeSplitsByBatch,
		"FlashDecoding num_splits chosen by batch size on the GPU: 4 KV splits while requests x heads < 132 SMs, 1 from 132 on",
		[]string{spec.RelBatchInvariance, spec.RelPadding, spec.RelOracleParity}},
	{"cuda-drift-attn-tile48", attention.Prefill{}, target.Tile48, func(*target.Batch) oracle.Schedule { return target.Tile48 },
		"a FlashAttention generation with KV tile 48 on the GPU, against cuda-attn_prefill's tile 64: identical up to 48 KV tokens, different from 49",
		[]string{spec.RelPathParity}},
	{"cuda-drift-order-logprob-rows132", logprob.Op{}, target.OracleLogProbSchedule, func(b *target.Batch) oracle.Schedule { return target.LogProbRows132(b) },
		"a log-softmax kernel on the GPU whose block size follows the launch shape: 1024 threads per row below 132 rows, one warp per row from 132 on; only the fp32 sum of exponentials changes order (target.LogProbRows132)",
		[]string{spec.RelBatchInvariance, spec.RelPadding, spec.RelOracleParity}},
}

// deviceName is the Info.Device of targets on d.
func deviceName(d *Device) string { return fmt.Sprintf("cuda:%d (%s)", d.ord, d.name) }

func init() {
	// cuda-<op> runs the op's oracle schedule, so it must equal
	// oracle-<op> bit for bit
	for _, k := range opKernels {
		op, s := k.Name(), k.Schedule()
		target.Register(Name(op), func() (target.Target, error) {
			d, err := Default()
			if err != nil {
				return nil, err
			}
			return &Target{
				info: target.Info{Name: Name(op), Op: op, Device: deviceName(d), Invariant: true, Schedule: s.String(),
					Models: "bitparity's exact CUDA kernel (gpu/kernels), bitwise equal to the oracle with this schedule"},
				policy: func(*target.Batch) oracle.Schedule { return s },
				dev:    d,
			}, nil
		})
	}
	for _, m := range drifts {
		m := m
		target.Register(m.name, func() (target.Target, error) {
			d, err := Default()
			if err != nil {
				return nil, err
			}
			return &Target{
				info: target.Info{Name: m.name, Op: m.op.Name(), Device: deviceName(d), Schedule: m.declared.String(),
					Models: m.models, Expect: m.expect},
				policy: m.policy,
				dev:    d,
			}, nil
		})
	}
	prefill, decode := attention.Prefill{}.Name(), attention.Decode{}.Name()
	target.RegisterPair(target.Pair{Op: prefill, Relation: spec.RelPathParity,
		Targets: []string{Name(prefill), Name(decode)}})
	target.RegisterPair(target.Pair{Op: prefill, Relation: spec.RelPathParity,
		Targets: []string{Name(prefill), "cuda-drift-attn-tile48"}, Expect: true})
}

// Reference returns a target computing schedule s exactly on t's device
// (target.Referencer): oracle parity compares t with it on the device and
// checks it against the CPU oracle on a sample of rows.
func (t *Target) Reference(s oracle.Schedule) (target.Target, bool) {
	if s == nil || s.Validate() != nil {
		return nil, false
	}
	if g, ok := s.(oracle.GEMMSchedule); ok && (g.MMA != oracle.MMANone || g.KTile > 1) {
		return nil, false // the gemm kernel runs fma chains in whole chunks only
	}
	return &Target{
		info: target.Info{Name: "cuda-reference-" + string(t.info.Op), Op: t.info.Op, Device: t.info.Device, Invariant: true,
			Schedule: s.String(), Models: "bitparity's exact CUDA kernel with the declared schedule of " + t.info.Name},
		policy: func(*target.Batch) oracle.Schedule { return s },
		dev:    t.dev,
	}, true
}
