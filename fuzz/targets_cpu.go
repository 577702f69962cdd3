package fuzz

import (
	"context"
	"fmt"
	"strings"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// The fixed schedules of the oracle targets, which the exact CUDA kernels
// implement too: one warp per row (32 threads, 4-wide loads, butterfly
// combine), one K chunk, KV tile 64 with one split. One warp per row keeps
// the CPU oracle cheap for the small rows most cases have (a 256-thread
// block costs 8 warp butterflies, 1280 adds per row, whatever the row's
// length).
var (
	OracleRMSNormSchedule = oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 32, Vec: 4,
		Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}, Order: oracle.ScaleThenWeight}
	OracleGEMMSchedule    = oracle.GEMMSchedule{SplitK: 1, Combine: oracle.CrossSequential}
	OracleLogProbSchedule = oracle.LogProbSchedule{Reduce: oracle.Reduction{Threads: 32, Vec: 4,
		Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}}
	OracleAttentionSchedule = oracle.AttentionSchedule{Tile: 64, Splits: 1}
)

// oracleSchedule returns the fixed schedule of op's oracle target.
func oracleSchedule(op spec.Op) (any, error) {
	switch op {
	case spec.OpRMSNorm:
		return OracleRMSNormSchedule, nil
	case spec.OpGEMM:
		return OracleGEMMSchedule, nil
	case spec.OpLogProb:
		return OracleLogProbSchedule, nil
	case spec.OpAttnPrefill, spec.OpAttnDecode:
		return OracleAttentionSchedule, nil
	}
	return nil, fmt.Errorf("unknown op %q", op)
}

// scheduleString formats a schedule as its String method does (the form
// Info.Schedule declares and ParseSchedule reads).
func scheduleString(s any) string { return fmt.Sprint(s) }

// runOracle runs the oracle with schedule s (the oracle schedule type of
// b.Op) on the selected rows of b. It computes in fp32 and rounds to the
// output dtype itself, which is bitwise what the oracle does with Out set
// (its last step is round_out of an fp32 value), so the fp32 values come for
// free as taps:
//
//	rmsnorm: taps [sum of squares, rstd] (RMSNormTaps)
//	logprob: taps [row max, sum of exponentials] (LogProbTaps)
//	gemm, attention: taps are the fp32 outputs before rounding (none when
//	the output dtype is fp32)
func runOracle(b *Batch, s any, rows []int) (*Output, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	sel := rows
	if sel == nil {
		sel = make([]int, b.Rows())
		for i := range sel {
			sel[i] = i
		}
	}
	o := &Output{Rows: sel, Cols: b.Cols(), DType: b.OutDType()}
	var y []float32
	var err error
	wrong := func() error {
		return fmt.Errorf("oracle %s: schedule %T does not fit the op", b.Op, s)
	}
	switch b.Op {
	case spec.OpRMSNorm:
		sch, ok := s.(oracle.RMSNormSchedule)
		if !ok {
			return nil, wrong()
		}
		in := *b.RMSNorm
		in.Out = oracle.FP32
		var taps []oracle.RMSNormTap
		if y, taps, err = oracle.RMSNormTaps(in, sch, sel); err != nil {
			return nil, err
		}
		o.TapCols = 2
		o.Taps = make([]float32, 0, 2*len(taps))
		for _, t := range taps {
			o.Taps = append(o.Taps, t.SumSq, t.Rstd)
		}
	case spec.OpGEMM:
		sch, ok := s.(oracle.GEMMSchedule)
		if !ok {
			return nil, wrong()
		}
		in := *b.GEMM
		in.Out = oracle.FP32
		y, err = oracle.GEMM(in, sch, sel)
	case spec.OpLogProb:
		sch, ok := s.(oracle.LogProbSchedule)
		if !ok {
			return nil, wrong()
		}
		var taps []oracle.LogProbTap
		if y, taps, err = oracle.LogProbTaps(*b.LogProb, sch, sel); err != nil {
			return nil, err
		}
		o.TapCols = 2
		o.Taps = make([]float32, 0, 2*len(taps))
		for _, t := range taps {
			o.Taps = append(o.Taps, t.Max, t.SumExp)
		}
		o.Values = y
		return o, nil
	case spec.OpAttnPrefill:
		sch, ok := s.(oracle.AttentionSchedule)
		if !ok {
			return nil, wrong()
		}
		in := *b.Prefill
		in.Out = oracle.FP32
		y, err = oracle.Prefill(in, sch, sel)
	case spec.OpAttnDecode:
		sch, ok := s.(oracle.AttentionSchedule)
		if !ok {
			return nil, wrong()
		}
		in := *b.Decode
		in.Out = oracle.FP32
		y, err = oracle.Decode(in, sch, sel)
	}
	if err != nil {
		return nil, err
	}
	if b.Op != spec.OpRMSNorm && b.Out != oracle.FP32 {
		o.Taps = append([]float32(nil), y...)
		o.TapCols = o.Cols
	}
	oracle.RoundSlice(b.Out, y)
	o.Values = y
	return o, nil
}

// scheduled is a CPU target: the oracle run with the schedule its policy
// chooses for the batch. The oracle targets have a constant policy; drift
// models choose by a property of the batch, as real kernels do.
type scheduled struct {
	info   Info
	policy func(b *Batch) any
	post   func(b *Batch, o *Output) // optional: what the target does after the oracle
}

func (t *scheduled) Info() Info { return t.info }

// Run computes the selected rows with the schedule policy(b) chooses; the
// choice depends on the whole batch, never on which rows are selected.
func (t *scheduled) Run(ctx context.Context, b *Batch, rows []int) (*Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.Op != t.info.Op {
		return nil, fmt.Errorf("target %s runs %s, not %s", t.info.Name, t.info.Op, b.Op)
	}
	o, err := runOracle(b, t.policy(b), rows)
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
func newOracleTarget(name string, op spec.Op, s any) *scheduled {
	return &scheduled{
		info: Info{Name: name, Op: op, Device: "cpu", Invariant: true, Schedule: scheduleString(s),
			Models: "the CPU oracle with a fixed schedule (invariant by construction)"},
		policy: func(*Batch) any { return s },
	}
}

func init() {
	for _, op := range spec.Ops {
		s, err := oracleSchedule(op)
		if err != nil {
			panic(err)
		}
		name := OracleName(op)
		t := newOracleTarget(name, op, s)
		Register(name, func() (Target, error) { return t, nil })
	}
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
	return newOracleTarget(OracleName(info.Op)+"["+info.Schedule+"]", info.Op, s), nil
}

// ParseSchedule reads a schedule of op written by its String method:
//
//	rmsnorm:   "threads=256 vec=4 warp=butterfly cross=sequential out=(x*rstd)*w"
//	logprob:   "threads=256 vec=4 warp=butterfly cross=sequential"
//	gemm:      "splitk=1 combine=sequential" (" mma=bf16" for a tensor core, " ktile=128" for chunks in whole K tiles)
//	attention: "tile=64 splits=1"
func ParseSchedule(op spec.Op, s string) (any, error) {
	switch op {
	case spec.OpRMSNorm, spec.OpLogProb:
		var r oracle.Reduction
		var warp, cross, out string
		n, _ := fmt.Sscanf(s, "threads=%d vec=%d warp=%s cross=%s out=%s", &r.Threads, &r.Vec, &warp, &cross, &out)
		if n < 4 {
			return nil, fmt.Errorf("schedule %q: want \"threads=T vec=V warp=W cross=C%s\"", s,
				map[bool]string{true: " out=O", false: ""}[op == spec.OpRMSNorm])
		}
		var err error
		if r.Warp, err = parseWarp(warp); err != nil {
			return nil, err
		}
		if r.Cross, err = parseCross(cross); err != nil {
			return nil, err
		}
		if op == spec.OpLogProb {
			ls := oracle.LogProbSchedule{Reduce: r}
			return ls, ls.Validate()
		}
		rs := oracle.RMSNormSchedule{Reduce: r}
		switch out {
		case oracle.ScaleThenWeight.String():
			rs.Order = oracle.ScaleThenWeight
		case oracle.WeightedScale.String():
			rs.Order = oracle.WeightedScale
		default:
			return nil, fmt.Errorf("schedule %q: unknown out order %q", s, out)
		}
		return rs, rs.Validate()
	case spec.OpGEMM:
		var g oracle.GEMMSchedule
		var comb string
		if n, _ := fmt.Sscanf(s, "splitk=%d combine=%s", &g.SplitK, &comb); n != 2 {
			return nil, fmt.Errorf("schedule %q: want \"splitk=S combine=C[ mma=F][ ktile=T]\"", s)
		}
		var err error
		if g.Combine, err = parseCross(comb); err != nil {
			return nil, err
		}
		for _, f := range strings.Fields(s)[2:] {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "mma":
				g.MMA, err = parseMMA(v)
			case "ktile":
				_, err = fmt.Sscanf(v, "%d", &g.KTile)
			default:
				err = fmt.Errorf("schedule %q: unknown field %q", s, f)
			}
			if err != nil {
				return nil, err
			}
		}
		return g, g.Validate()
	case spec.OpAttnPrefill, spec.OpAttnDecode:
		var a oracle.AttentionSchedule
		if n, _ := fmt.Sscanf(s, "tile=%d splits=%d", &a.Tile, &a.Splits); n != 2 {
			return nil, fmt.Errorf("schedule %q: want \"tile=T splits=S\"", s)
		}
		return a, a.Validate()
	}
	return nil, fmt.Errorf("unknown op %q", op)
}

func parseWarp(s string) (oracle.WarpOrder, error) {
	for _, w := range []oracle.WarpOrder{oracle.WarpButterfly, oracle.WarpSequential} {
		if w.String() == s {
			return w, nil
		}
	}
	return 0, fmt.Errorf("unknown warp order %q", s)
}

func parseCross(s string) (oracle.CrossOrder, error) {
	for _, c := range []oracle.CrossOrder{oracle.CrossSequential, oracle.CrossTree} {
		if c.String() == s {
			return c, nil
		}
	}
	return 0, fmt.Errorf("unknown combine order %q", s)
}

func parseMMA(s string) (oracle.MMAFormat, error) {
	for _, f := range []oracle.MMAFormat{oracle.MMABF16, oracle.MMAFP16, oracle.MMATF32} {
		if f.String() == s {
			return f, nil
		}
	}
	return 0, fmt.Errorf("unknown mma format %q (want bf16, fp16 or tf32)", s)
}
