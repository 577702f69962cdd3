package oracle

import (
	"fmt"
	"strings"
)

// Schedule is the reduction order of one op: RMSNormSchedule,
// GEMMSchedule, LogProbSchedule or AttentionSchedule. Its String form is
// what a target declares and the Parse functions read back.
type Schedule interface {
	fmt.Stringer
	Validate() error
	isSchedule()
}

func (RMSNormSchedule) isSchedule()   {}
func (GEMMSchedule) isSchedule()      {}
func (LogProbSchedule) isSchedule()   {}
func (AttentionSchedule) isSchedule() {}

// ParseRMSNormSchedule reads what RMSNormSchedule.String writes:
//
//	"threads=256 vec=4 warp=butterfly cross=sequential out=(x*rstd)*w"
func ParseRMSNormSchedule(s string) (RMSNormSchedule, error) {
	var r Reduction
	var warp, cross, out string
	if n, _ := fmt.Sscanf(s, "threads=%d vec=%d warp=%s cross=%s out=%s", &r.Threads, &r.Vec, &warp, &cross, &out); n != 5 {
		return RMSNormSchedule{}, fmt.Errorf("rmsnorm schedule %q: want \"threads=T vec=V warp=W cross=C out=O\"", s)
	}
	rs := RMSNormSchedule{}
	var err error
	if rs.Reduce, err = parseReduction(r, warp, cross); err != nil {
		return RMSNormSchedule{}, fmt.Errorf("rmsnorm schedule %q: %w", s, err)
	}
	switch out {
	case ScaleThenWeight.String():
		rs.Order = ScaleThenWeight
	case WeightedScale.String():
		rs.Order = WeightedScale
	default:
		return RMSNormSchedule{}, fmt.Errorf("rmsnorm schedule %q: unknown out order %q", s, out)
	}
	return rs, rs.Validate()
}

// ParseLogProbSchedule reads what LogProbSchedule.String writes:
//
//	"threads=256 vec=4 warp=butterfly cross=sequential"
func ParseLogProbSchedule(s string) (LogProbSchedule, error) {
	var r Reduction
	var warp, cross string
	if n, _ := fmt.Sscanf(s, "threads=%d vec=%d warp=%s cross=%s", &r.Threads, &r.Vec, &warp, &cross); n != 4 {
		return LogProbSchedule{}, fmt.Errorf("logprob schedule %q: want \"threads=T vec=V warp=W cross=C\"", s)
	}
	red, err := parseReduction(r, warp, cross)
	if err != nil {
		return LogProbSchedule{}, fmt.Errorf("logprob schedule %q: %w", s, err)
	}
	ls := LogProbSchedule{Reduce: red}
	return ls, ls.Validate()
}

// ParseGEMMSchedule reads what GEMMSchedule.String writes:
//
//	"splitk=1 combine=sequential"
//	"splitk=3 combine=sequential mma=bf16 ktile=64" (tensor-core steps,
//	chunks in whole K tiles)
func ParseGEMMSchedule(s string) (GEMMSchedule, error) {
	var g GEMMSchedule
	var comb string
	if n, _ := fmt.Sscanf(s, "splitk=%d combine=%s", &g.SplitK, &comb); n != 2 {
		return GEMMSchedule{}, fmt.Errorf("gemm schedule %q: want \"splitk=S combine=C[ mma=F][ ktile=T]\"", s)
	}
	var err error
	if g.Combine, err = parseCross(comb); err != nil {
		return GEMMSchedule{}, fmt.Errorf("gemm schedule %q: %w", s, err)
	}
	for _, f := range strings.Fields(s)[2:] {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "mma":
			g.MMA, err = parseMMA(v)
		case "ktile":
			_, err = fmt.Sscanf(v, "%d", &g.KTile)
		default:
			err = fmt.Errorf("unknown field %q", f)
		}
		if err != nil {
			return GEMMSchedule{}, fmt.Errorf("gemm schedule %q: %w", s, err)
		}
	}
	return g, g.Validate()
}

func parseMMA(s string) (MMAFormat, error) {
	for _, f := range []MMAFormat{MMABF16, MMAFP16, MMATF32} {
		if f.String() == s {
			return f, nil
		}
	}
	return 0, fmt.Errorf("unknown mma format %q (want bf16, fp16 or tf32)", s)
}

// ParseAttentionSchedule reads what AttentionSchedule.String writes:
//
//	"tile=64 splits=1"
func ParseAttentionSchedule(s string) (AttentionSchedule, error) {
	var a AttentionSchedule
	if n, _ := fmt.Sscanf(s, "tile=%d splits=%d", &a.Tile, &a.Splits); n != 2 {
		return AttentionSchedule{}, fmt.Errorf("attention schedule %q: want \"tile=T splits=S\"", s)
	}
	return a, a.Validate()
}

func parseReduction(r Reduction, warp, cross string) (Reduction, error) {
	var err error
	if r.Warp, err = parseWarp(warp); err != nil {
		return Reduction{}, err
	}
	if r.Cross, err = parseCross(cross); err != nil {
		return Reduction{}, err
	}
	return r, nil
}

func parseWarp(s string) (WarpOrder, error) {
	for _, w := range []WarpOrder{WarpButterfly, WarpSequential} {
		if w.String() == s {
			return w, nil
		}
	}
	return 0, fmt.Errorf("unknown warp order %q", s)
}

func parseCross(s string) (CrossOrder, error) {
	for _, c := range []CrossOrder{CrossSequential, CrossTree} {
		if c.String() == s {
			return c, nil
		}
	}
	return 0, fmt.Errorf("unknown combine order %q", s)
}
