package target

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/ops/gemm"
	"github.com/bitparity/bitparity/ops/logprob"
	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// The fixed schedules of the oracle targets, which the exact CUDA kernels
// implement too (each op package says why its own is what it is).
var (
	OracleRMSNormSchedule   = rmsnorm.OracleSchedule
	OracleGEMMSchedule      = gemm.OracleSchedule
	OracleLogProbSchedule   = logprob.OracleSchedule
	OracleAttentionSchedule = attention.OracleSchedule
)

// RunOracle runs the oracle with schedule s (the oracle schedule type of
// b.Op) on the selected rows of b. It computes in fp32 and rounds to the
// output dtype itself, which is bitwise what the oracle does with Out set
// (its last step is round_out of an fp32 value), so the fp32 values come for
// free as taps:
//
//	rmsnorm: taps [sum of squares, rstd] (RMSNormTaps)
//	logprob: taps [row max, sum of exponentials] (LogProbTaps)
//	gemm, attention: taps are the fp32 outputs before rounding (none when
//	the output dtype is fp32)
func RunOracle(b *Batch, s oracle.Schedule, rows []int) (*Output, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	sel := b.Rows0(rows)
	k, in, _ := b.Kind()
	o := &Output{Rows: sel, Cols: b.Cols(), DType: b.OutDType()}
	y, taps, tapCols, err := k.Reference(in, s, sel)
	if err != nil {
		return nil, err
	}
	o.Taps, o.TapCols = taps, tapCols
	if taps == nil && o.DType != oracle.FP32 {
		o.Taps = append([]float32(nil), y...)
		o.TapCols = o.Cols
	}
	oracle.RoundSlice(o.DType, y)
	o.Values = y
	return o, nil
}

// scheduled is a CPU target: the oracle run with the schedule its policy
// chooses for the batch. The oracle targets have a constant policy; drift
// models choose by a property of the batch, as real kernels do.
type scheduled struct {
	info   Info
	policy func(b *Batch) oracle.Schedule
	post   func(b *Batch, o *Output) // optional: what the target does after the oracle
}

func (t *scheduled) Info() Info { return t.info }

// Scheduled returns a CPU target described by info that runs the oracle
// with the schedule policy chooses for each whole batch (never for the
// selected rows): a drift model when the choice depends on the batch.
func Scheduled(info Info, policy func(b *Batch) oracle.Schedule) Target {
	return &scheduled{info: info, policy: policy}
}

// Run computes the selected rows with the schedule policy(b) chooses; the
// choice depends on the whole batch, never on which rows are selected.
func (t *scheduled) Run(ctx context.Context, b *Batch, rows []int) (*Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.Op != t.info.Op {
		return nil, fmt.Errorf("target %s runs %s, not %s", t.info.Name, t.info.Op, b.Op)
	}
	o, err := RunOracle(b, t.policy(b), rows)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.info.Name, err)
	}
	if t.post != nil {
		t.post(b, o)
	}
	return o, nil
}

// OracleName is the registry name of op's oracle target.
func OracleName(op spec.Op) string { return "oracle-" + string(op) }

// newOracleTarget is the oracle with schedule s for op: invariant by
// construction (rows are independent and the schedule is fixed).
func newOracleTarget(name string, op spec.Op, s oracle.Schedule) *scheduled {
	return &scheduled{
		info: Info{Name: name, Op: op, Device: "cpu", Invariant: true, Schedule: s.String(),
			Models:  "the CPU oracle with a fixed schedule (invariant by construction)",
			Layouts: layouts(op)}, // the same rows whatever the layout
		policy: func(*Batch) oracle.Schedule { return s },
	}
}

// layouts says whether op's oracle gives the same rows whatever an
// engine's layout (ops.CaseOp.Layouts).
func layouts(op spec.Op) bool {
	k, ok := all.Case(op)
	return ok && k.Layouts()
}

// oracleTargets are the oracle targets of every op (OracleName), each
// with its fixed schedule.
func oracleTargets() []Target {
	var ts []Target
	for _, k := range all.Cases {
		ts = append(ts, newOracleTarget(OracleName(k.Name()), k.Name(), k.Schedule()))
	}
	return ts
}

// OracleFor returns the oracle running t's declared schedule (Info.Schedule,
// in the form of the oracle schedule's String method), so oracle parity of t
// is bitwise. It fails when t declares no schedule or one this build cannot
// read.
func OracleFor(t Target) (Target, error) {
	info := t.Info()
	if info.Schedule == "" {
		return nil, fmt.Errorf("target %s declares no schedule", info.Name)
	}
	s, err := ParseSchedule(info.Op, info.Schedule)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", info.Name, err)
	}
	return OracleWith(info.Op, s), nil
}

// OracleWith returns the CPU oracle of op running schedule s, with the
// outputs and fp32 taps of the oracle targets (schedule inference runs
// every candidate schedule through it).
func OracleWith(op spec.Op, s oracle.Schedule) Target {
	return newOracleTarget(OracleName(op)+"["+s.String()+"]", op, s)
}

// ParseSchedule reads a schedule of op in the form its String method
// writes (oracle.ParseRMSNormSchedule and its siblings say which).
func ParseSchedule(op spec.Op, s string) (oracle.Schedule, error) {
	k, ok := all.Case(op)
	if !ok {
		return nil, fmt.Errorf("unknown op %q", op)
	}
	return k.ParseSchedule(s)
}
