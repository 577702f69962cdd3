package oracle

import "fmt"

// LogProbInput is a batch of logits (Rows x Vocab, of the input dtype) and
// one target id per row.
type LogProbInput struct {
	Logits      []float32
	Targets     []int32
	Rows, Vocab int
}

// LogProbTap holds the fp32 intermediates of one row.
type LogProbTap struct {
	Max, SumExp float32
}

// LogProb computes, for each selected row r (all rows when rows is nil), the
// fp32 token log-prob out[i] for the i-th selected row:
//
//	m   = max_j x[r][j]                      by s.Reduce with max.f32
//	sum = Σ_j exp(x[r][j] - m)               by s.Reduce, term acc + Exp32(x - m)
//	lp  = (x[r][t] - m) - Log32(sum)         // sub.rn twice, t = target id
//
// The result stays fp32; a relation rounds it to the dtype it compares in.
func LogProb(in LogProbInput, s LogProbSchedule, rows []int) ([]float32, error) {
	out, _, err := LogProbTaps(in, s, rows)
	return out, err
}

// LogProbTaps is LogProb that also returns each row's max and sum.
func LogProbTaps(in LogProbInput, s LogProbSchedule, rows []int) ([]float32, []LogProbTap, error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	if in.Rows < 0 || in.Vocab < 1 {
		return nil, nil, fmt.Errorf("logprob: rows %d vocab %d: %w", in.Rows, in.Vocab, ErrShape)
	}
	if err := checkLen("logprob logits", len(in.Logits), in.Rows*in.Vocab); err != nil {
		return nil, nil, err
	}
	if err := checkLen("logprob targets", len(in.Targets), in.Rows); err != nil {
		return nil, nil, err
	}
	for r, t := range in.Targets {
		if t < 0 || int(t) >= in.Vocab {
			return nil, nil, fmt.Errorf("logprob: row %d target %d outside vocab %d: %w", r, t, in.Vocab, ErrShape)
		}
	}
	sel, err := SelectRows(rows, in.Rows)
	if err != nil {
		return nil, nil, fmt.Errorf("logprob: %w", err)
	}
	V := in.Vocab
	out := make([]float32, len(sel))
	taps := make([]LogProbTap, len(sel))
	parallelRows(len(sel), func(i int) {
		x := in.Logits[sel[i]*V : (sel[i]+1)*V]
		lanes := make([]float32, s.Reduce.Threads)
		m := reduceMax(s.Reduce, x, lanes) // every thread starts from -Inf, not +0
		sum := reduceSumExp(s.Reduce, x, m, lanes)
		taps[i] = LogProbTap{Max: m, SumExp: sum}
		out[i] = Sub32(Sub32(x[in.Targets[sel[i]]], m), Log32(sum))
	})
	return out, taps, nil
}
