package fuzz

import (
	"fmt"
	"slices"
	"sync"

	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// SensitiveAttempts bounds the draws of one row of a sensitive case: the
// row as drawn and at most SensitiveAttempts-1 re-draws.
const SensitiveAttempts = 4

// SensitiveOps lists the ops that have a sensitive draw (power.Ops).
var SensitiveOps = power.Ops

// Family is the family of reduction orders the rows of case c are
// measured against (power.NewFamily): around the oracle target's declared
// schedule of c's op, at c's row length (hidden, vocab).
func Family(c spec.Case) (*power.Family, error) {
	switch c.Op {
	case spec.OpRMSNorm:
		return power.NewFamily(c.Op, c.Shape.Hidden, target.OracleRMSNormSchedule)
	case spec.OpLogProb:
		return power.NewFamily(c.Op, c.Shape.Vocab, target.OracleLogProbSchedule)
	}
	return nil, fmt.Errorf("no schedule family for op %s (want one of %v)", c.Op, SensitiveOps)
}

// sensitiveInputs makes the batch of a case with Dist "sensitive": each
// row (item i) is, of at most SensitiveAttempts candidates, the one that
// shows the most alternatives of Family(c) (power.Family.RMSNorm or
// LogProb; the first such, and the first candidate that shows all stops
// the search):
//
//	candidate 0   the row of the normal draw of the case (same seed)
//	candidate a   the row re-drawn as the normal draw's row key
//	              i + a<<40 (tensor and σ of the item tensor)
//
// each nudged as boundary nudges it, rmsnorm by boundary.RMSNormRows,
// logprob by boundary.LogProbRow in the compare dtype (a fp32 compare:
// boundary.LogProbPeak), the target aimed at when i + seed is odd being
// one fp32 ulp to the odd side of the midpoint, else the midpoint itself:
// the side alternates with the seed, so consecutive draws of a scan (seed,
// seed+1) put every position on both sides, and a row shows a change of
// either sign in one of the two. The shared tensors (w, target ids) are the
// normal draw's. A row costs at most SensitiveAttempts nudges
// (boundary.MaxEvals oracle row evaluations each) and SensitiveAttempts
// family checks (|Family| scheduled sums of the row each), and its bits
// depend only on (seed, row key), never on the batch.
func sensitiveInputs(c spec.Case) (*target.Batch, error) {
	f, err := Family(c)
	if err != nil {
		return nil, fmt.Errorf("sensitive inputs: %w", err)
	}
	base := c
	base.Dist = spec.DistNormal
	b, err := Inputs(base)
	if err != nil {
		return nil, err
	}
	rt := itemTensor(base)
	redraw := func(item uint64, a, cols int) ([]float32, error) {
		return fill(base, rt.ID, rt.Dist, b.In, rt.Scale, 1, cols, func(int) uint64 { return item + uint64(a)<<40 })
	}
	var (
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
	}
	switch c.Op {
	case spec.OpRMSNorm:
		in := b.RMSNorm
		out, h := b.Out, in.Hidden
		rows := boundary.NewRMSNormRows(in.W, in.Eps, b.In, out, target.OracleRMSNormSchedule)
		eachRow(in.Rows, func(i int) {
			odd := (uint64(i)+c.Seed)%2 == 1
			row := in.X[i*h : (i+1)*h]
			best, bestN := []float32(nil), -1
			for a := range SensitiveAttempts {
				x := slices.Clone(row)
				if a > 0 {
					var err error
					if x, err = redraw(uint64(i), a, h); err != nil {
						fail(err)
						return
					}
				}
				rows.Nudge(x, odd)
				s, err := f.RMSNorm(x, in.W, in.Eps, out)
				if err != nil {
					fail(err)
					return
				}
				if n := s.Len(); n > bestN {
					best, bestN = x, n
				}
				if bestN == len(f.Alts) {
					break
				}
			}
			copy(row, best)
		})
	case spec.OpLogProb:
		cmp, err := oracle.ParseDType(string(c.CompareDType()))
		if err != nil {
			return nil, fmt.Errorf("sensitive inputs: compare dtype: %w", err)
		}
		l := b.LogProb
		v := l.Vocab
		eachRow(l.Rows, func(i int) {
			odd := (uint64(i)+c.Seed)%2 == 1
			row, t := l.Logits[i*v:(i+1)*v], int(l.Targets[i])
			best, bestN := []float32(nil), -1
			for a := range SensitiveAttempts {
				x := slices.Clone(row)
				if a > 0 {
					var err error
					if x, err = redraw(uint64(i), a, v); err != nil {
						fail(err)
						return
					}
				}
				if cmp == oracle.FP32 {
					boundary.LogProbPeak(x, t, b.In)
				} else {
					boundary.LogProbRow(x, t, b.In, cmp, target.OracleLogProbSchedule, odd)
				}
				s, err := f.LogProb(x, t, cmp)
				if err != nil {
					fail(err)
					return
				}
				if n := s.Len(); n > bestN {
					best, bestN = x, n
				}
				if bestN == len(f.Alts) {
					break
				}
			}
			copy(row, best)
		})
	}
	if firstErr != nil {
		return nil, fmt.Errorf("sensitive inputs: %w", firstErr)
	}
	return b, nil
}

// RowPower returns, for each row of batch b of case c (rmsnorm or
// logprob, its values on the host), the alternatives of f the row shows
// in c's compare dtype (power.Family.RMSNorm, LogProb), rows checked in
// parallel.
func RowPower(c spec.Case, b *target.Batch, f *power.Family) ([]power.Set, error) {
	var n int
	switch {
	case c.Op == spec.OpRMSNorm && b.RMSNorm != nil && b.RMSNorm.X != nil:
		n = b.RMSNorm.Rows
	case c.Op == spec.OpLogProb && b.LogProb != nil && b.LogProb.Logits != nil:
		n = b.LogProb.Rows
	default:
		return nil, fmt.Errorf("row power: a %s batch without its rows on the host", c.Op)
	}
	cmp, err := oracle.ParseDType(string(c.CompareDType()))
	if err != nil {
		return nil, fmt.Errorf("row power: compare dtype: %w", err)
	}
	sets := make([]power.Set, n)
	errs := make([]error, n)
	eachRow(n, func(i int) {
		if c.Op == spec.OpRMSNorm {
			in := b.RMSNorm
			sets[i], errs[i] = f.RMSNorm(in.X[i*in.Hidden:(i+1)*in.Hidden], in.W, in.Eps, cmp)
			return
		}
		l := b.LogProb
		sets[i], errs[i] = f.LogProb(l.Logits[i*l.Vocab:(i+1)*l.Vocab], int(l.Targets[i]), cmp)
	})
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("row power: row %d: %w", i, err)
		}
	}
	return sets, nil
}
