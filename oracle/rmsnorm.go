package oracle

import "fmt"

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
