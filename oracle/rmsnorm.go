package oracle

import (
	"fmt"
	"slices"
)

// RMSNormInput is a batch for RMSNorm: X is Rows x Hidden, W has Hidden
// values; both hold values of the input dtype. Out is the output dtype.
type RMSNormInput struct {
	X, W         []float32
	Rows, Hidden int
	Eps          float32
	Out          DType
}

// RMSNormTap holds the fp32 intermediates of one row.
type RMSNormTap struct {
	SumSq, Rstd float32
}

// RMSNorm computes, for each selected row r (all rows when rows is nil),
// into out[i*Hidden : (i+1)*Hidden] for the i-th selected row:
//
//	ss   = Σ x[r][j]² by s.Reduce with term fma(x, x, acc)
//	mean = ss / Hidden                       // div.rn
//	rstd = 1 / sqrt(mean + eps)              // add.rn, sqrt.rn, div.rn
//	y[j] = round_out((x[r][j] · rstd) · w[j])  // ScaleThenWeight
//	y[j] = round_out(x[r][j] · (rstd · w[j]))  // WeightedScale
//
// Rows are independent: row r's bits never depend on other rows.
func RMSNorm(in RMSNormInput, s RMSNormSchedule, rows []int) ([]float32, error) {
	out, _, err := RMSNormTaps(in, s, rows)
	return out, err
}

// RMSNormTaps is RMSNorm that also returns each selected row's fp32
// intermediates.
func RMSNormTaps(in RMSNormInput, s RMSNormSchedule, rows []int) ([]float32, []RMSNormTap, error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	if in.Rows < 0 || in.Hidden < 1 {
		return nil, nil, fmt.Errorf("rmsnorm: rows %d hidden %d: %w", in.Rows, in.Hidden, ErrShape)
	}
	if err := checkLen("rmsnorm x", len(in.X), in.Rows*in.Hidden); err != nil {
		return nil, nil, err
	}
	if err := checkLen("rmsnorm w", len(in.W), in.Hidden); err != nil {
		return nil, nil, err
	}
	sel, err := SelectRows(rows, in.Rows)
	if err != nil {
		return nil, nil, fmt.Errorf("rmsnorm: %w", err)
	}
	H := in.Hidden
	out := make([]float32, len(sel)*H)
	taps := make([]RMSNormTap, len(sel))
	hf := float32(H)
	parallelRows(len(sel), func(i int) {
		x := in.X[sel[i]*H : (sel[i]+1)*H]
		lanes := make([]float32, s.Reduce.Threads)
		ss := reduceSumSquares(s.Reduce, x, lanes)
		mean := Div32(ss, hf)
		rstd := Div32(1, Sqrt32(Add32(mean, in.Eps)))
		taps[i] = RMSNormTap{SumSq: ss, Rstd: rstd}
		y := out[i*H : (i+1)*H]
		if s.Order == WeightedScale {
			for j, xv := range x {
				y[j] = Mul32(xv, Mul32(rstd, in.W[j]))
			}
		} else {
			for j, xv := range x {
				y[j] = Mul32(Mul32(xv, rstd), in.W[j])
			}
		}
		RoundSlice(in.Out, y)
	})
	return out, taps, nil
}

// RMSNormProbe evaluates one RMSNorm row again and again while single
// elements of x change (a search that tunes a few elements), bitwise as
// RMSNormTaps on that row with Out FP32: it keeps every thread's partial
// sum of squares (s.Reduce), so changing x[j] recomputes only the partial
// of the thread that owns j (Hidden/Threads fmas; all of them for one
// thread) and the combine of the partials, instead of the whole row.
type RMSNormProbe struct {
	x, w     []float32
	eps      float32
	s        RMSNormSchedule
	lanes    []float32 // thread t's partial sum of squares of x
	scratch  []float32 // combineLanes overwrites its argument
	tap      RMSNormTap
	tapFresh bool
}

// NewRMSNormProbe starts a probe of the row x (len(x) = len(w) >= 1) with
// schedule s. The probe reads x (the caller's slice) and writes it in Set;
// the caller must not change x otherwise.
func NewRMSNormProbe(x, w []float32, eps float32, s RMSNormSchedule) (*RMSNormProbe, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(x) < 1 || len(w) != len(x) {
		return nil, fmt.Errorf("rmsnorm probe: x has %d values, w %d: %w", len(x), len(w), ErrShape)
	}
	T := s.Reduce.Threads
	p := &RMSNormProbe{x: x, w: w, eps: eps, s: s, lanes: make([]float32, T), scratch: make([]float32, T)}
	for t := range T {
		p.lanes[t] = p.lane(t)
	}
	return p, nil
}

// lane is thread t's partial, as reduceSumSquares computes it.
func (p *RMSNormProbe) lane(t int) float32 {
	if p.s.Reduce.Threads == 1 {
		return fmaChain(0, p.x, p.x)
	}
	return laneSumSquares(p.x, t, p.s.Reduce.Threads, p.s.Reduce.Vec)
}

// Set stores v in x[j] and updates the partial of the thread that owns j.
func (p *RMSNormProbe) Set(j int, v float32) {
	p.x[j] = v
	T, V := p.s.Reduce.Threads, p.s.Reduce.Vec
	t := 0
	if T > 1 {
		t = j / V % T
	}
	p.lanes[t] = p.lane(t)
	p.tapFresh = false
}

// Tap is the row's sum of squares and rstd at the current x.
func (p *RMSNormProbe) Tap() RMSNormTap {
	if !p.tapFresh {
		var ss float32
		if p.s.Reduce.Threads == 1 {
			ss = p.lanes[0]
		} else {
			ss = combineLanes(p.s.Reduce, append(p.scratch[:0], p.lanes...), opAdd)
		}
		mean := Div32(ss, float32(len(p.x)))
		p.tap = RMSNormTap{SumSq: ss, Rstd: Div32(1, Sqrt32(Add32(mean, p.eps)))}
		p.tapFresh = true
	}
	return p.tap
}

// Y is the fp32 output j at the current x.
func (p *RMSNormProbe) Y(j int) float32 {
	rstd := p.Tap().Rstd
	if p.s.Order == WeightedScale {
		return Mul32(p.x[j], Mul32(rstd, p.w[j]))
	}
	return Mul32(Mul32(p.x[j], rstd), p.w[j])
}

// Row appends every fp32 output at the current x to dst[:0].
func (p *RMSNormProbe) Row(dst []float32) []float32 {
	dst = slices.Grow(dst[:0], len(p.x))
	for j := range p.x {
		dst = append(dst, p.Y(j))
	}
	return dst
}
