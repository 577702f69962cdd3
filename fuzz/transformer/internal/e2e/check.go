package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Relations lists the relations Check runs on a transformer case.
var Relations = []string{spec.RelLogProbParity, spec.RelPathParity}

// Check runs the relation of transformer case c (FromCase) and returns nil
// when it holds, a finding when it does not, and an error for a bad case.
//
//   - logprob_parity (also when Relation is empty): the train path's
//     log-probs (rounded to the declared training dtype, Case.Out) and
//     the engine's (fp32) must have the same bits in Case.Compare on the
//     positions of Rel.Mask.
//   - path_parity: that, and every op's fp32 output for every token both
//     paths computed (the taps) must have the same bits.
//
// Two harness misuses give a finding of kind "misuse" whose Message
// explains it, whatever the values: comparing in another dtype than the
// training dtype (fp32 against bf16 reports the rounding to bf16 as drift),
// and comparing positions the engine never reported (their +0 is a
// zero-fill, not a log-prob). A mismatch finding names, in Message and in
// Site, the first layer and op where a token diverged (Localize) and
// carries that op's drift map. Row is the first differing response
// position (positionBase order) for log-probs, or the first differing
// token (tokenBase order) when only the taps differ.
func Check(ctx context.Context, c spec.Case) (*spec.Finding, error) {
	start := time.Now()
	rel := c.Relation
	if rel == "" {
		rel = spec.RelLogProbParity
	}
	if rel != spec.RelLogProbParity && rel != spec.RelPathParity {
		return nil, fmt.Errorf("transformer case: relation %q: want %s", rel, strings.Join(Relations, " or "))
	}
	st, err := FromCase(c)
	if err != nil {
		return nil, err
	}
	var ta, tb *Taps
	if rel == spec.RelPathParity {
		_, tokens := tokenBase(st.Requests)
		ta, tb = NewTaps(tokens), NewTaps(tokens)
	}
	train, inf, err := st.Run(ctx, ta, tb)
	if err != nil {
		return nil, err
	}
	f := misuse(st, train, inf)
	if f == nil {
		f = compareLogProbs(st, train, inf)
	}
	if f == nil && rel == spec.RelPathParity {
		if d := FirstDivergence(st.Model.Config, st.Requests, ta, tb); d != nil {
			f = &spec.Finding{Kind: spec.KindMismatch, Row: d.Token, Col: d.Col,
				A: value(oracle.FP32, d.A), B: value(oracle.FP32, d.B),
				ULPs: oracle.ULPDistance(oracle.FP32, d.A, d.B).ULPs, RowsDiffering: d.Tokens,
				Message: "log-probs agree in " + st.Compare.String() + ", but an fp32 op output differs: the drift is hidden by the rounding so far"}
		}
	}
	if f == nil {
		return nil, nil
	}
	if f.Kind == spec.KindMismatch {
		d, dm, err := Localize(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("transformer: localize: %w", err)
		}
		f.DriftMap = dm
		f.Message += "; " + d.String()
		f.Site = &spec.Site{Layer: d.Site.Layer, Op: string(d.Site.Op)}
	}
	f.Case = c
	f.Relation = rel
	f.TargetA, f.TargetB = st.Train.String(), st.Infer.String()
	if len(c.Targets) == 2 {
		f.TargetA, f.TargetB = c.Targets[0], c.Targets[1]
	}
	f.Repro = spec.ReproLine(c)
	f.Env = spec.HostEnv()
	f.FoundAt = time.Now().UTC()
	f.ToMinimal = spec.Duration(time.Since(start))
	f.Signature = spec.Signature(*f)
	return f, nil
}

// Run runs both paths of the setup (taps may be nil).
func (st *Setup) Run(ctx context.Context, ta, tb *Taps) ([]float32, *Inference, error) {
	train, err := RunTrain(st.Model, st.Train, st.Requests, st.LogProbType, ta)
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	inf, err := RunInfer(st.Model, st.Infer, st.Requests, st.Engine, tb)
	if err != nil {
		return nil, nil, err
	}
	return train, inf, nil
}

func value(dt oracle.DType, v float32) spec.Value {
	return spec.Value{Hex: oracle.Hex(dt, v), Dec: oracle.Decimal(oracle.Round(dt, v))}
}

// compared returns the positions the relation compares.
func (st *Setup) compared(n int) []int {
	if st.Mask != nil {
		return st.Mask
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// where names a response position.
func where(reqs []Request, pos int) string {
	pb, _ := positionBase(reqs)
	for r := len(pb) - 1; r >= 0; r-- {
		if pos >= pb[r] {
			return fmt.Sprintf("request %d response token %d (token %d)", r, pos-pb[r], reqs[r].Prompt+pos-pb[r])
		}
	}
	return fmt.Sprintf("position %d", pos)
}

// misuse returns a "misuse" finding when the comparison the case declares
// is meaningless, or nil.
func misuse(st *Setup, train []float32, inf *Inference) *spec.Finding {
	var msgs []string
	f := &spec.Finding{Kind: spec.KindMisuse, Row: -1}
	pos := st.compared(len(train))
	if st.Compare != st.LogProbType {
		fine, coarse, first := 0, 0, -1
		for _, p := range pos {
			if !inf.Reported[p] {
				continue
			}
			a, b := train[p], inf.LogProbs[p]
			sameTrain := oracle.ToBits(st.LogProbType, a) == oracle.ToBits(st.LogProbType, b)
			sameCmp := oracle.ToBits(st.Compare, a) == oracle.ToBits(st.Compare, b)
			if !sameCmp {
				fine++
				if sameTrain && first < 0 {
					first = p
				}
			}
			if !sameTrain {
				coarse++
			}
		}
		msg := fmt.Sprintf("misuse: log-probs compared in %s, but the declared training dtype is %s: the trainer's log-probs carry only %s's precision, so a comparison in %s reports the rounding to %s as drift (%d of %d compared positions differ in %s",
			st.Compare, st.LogProbType, st.LogProbType, st.Compare, st.LogProbType, fine, len(pos), st.Compare)
		if first >= 0 {
			msg += fmt.Sprintf("; first: %s, train %s vs engine %s, equal in %s", where(st.Requests, first),
				oracle.Hex(st.Compare, train[first]), oracle.Hex(st.Compare, inf.LogProbs[first]), st.LogProbType)
			f.Row, f.A, f.B = first, value(st.Compare, train[first]), value(st.Compare, inf.LogProbs[first])
			f.ULPs = oracle.ULPDistance(st.Compare, train[first], inf.LogProbs[first]).ULPs
		}
		msg += fmt.Sprintf("; in %s, %d differ). Compare in the training dtype: set compare to %s or leave it empty", st.LogProbType, coarse, st.LogProbType)
		msgs = append(msgs, msg)
	}
	var never []int
	for _, p := range pos {
		if !inf.Reported[p] {
			never = append(never, p)
		}
	}
	if len(never) > 0 {
		spurious := 0
		for _, p := range never {
			if oracle.ToBits(st.Compare, train[p]) != oracle.ToBits(st.Compare, inf.LogProbs[p]) {
				spurious++
			}
		}
		p := never[0]
		msgs = append(msgs, fmt.Sprintf("misuse: %d compared positions were never reported by the engine (requests that left before their response ended; first: %s); the engine buffer holds +0 there, a zero-fill, not a log-prob, so the comparison counts %d spurious mismatches. Mask them out: compare only the reported positions (rel.mask = transformer.ReportedMask, %d positions)",
			len(never), where(st.Requests, p), spurious, len(ReportedMask(st.Requests))))
		if f.Row < 0 {
			f.Row, f.A, f.B = p, value(st.Compare, train[p]), value(st.Compare, inf.LogProbs[p])
			f.ULPs = oracle.ULPDistance(st.Compare, train[p], inf.LogProbs[p]).ULPs
		}
		f.RowsDiffering = spurious
	}
	if len(msgs) == 0 {
		return nil
	}
	if f.Row < 0 {
		f.Row = 0
	}
	f.Message = strings.Join(msgs, "; ")
	return f
}

// compareLogProbs compares the masked positions in the compare dtype.
func compareLogProbs(st *Setup, train []float32, inf *Inference) *spec.Finding {
	var f *spec.Finding
	for _, p := range st.compared(len(train)) {
		a, b := train[p], inf.LogProbs[p]
		da := oracle.ULPDistance(st.Compare, a, b)
		if da.SameBits {
			continue
		}
		if f == nil {
			f = &spec.Finding{Kind: spec.KindMismatch, Row: p, A: value(st.Compare, a), B: value(st.Compare, b),
				ULPs: da.ULPs, SignedZero: da.SignedZero}
		}
		f.RowsDiffering++
		if len(f.Mismatches) < 64 {
			f.Mismatches = append(f.Mismatches, spec.RowMismatch{Row: p, Count: 1, MaxULPs: da.ULPs, Cols: 1})
		}
	}
	if f != nil {
		f.Message = fmt.Sprintf("log-probs differ in %s at %d of %d compared positions (first: %s)",
			st.Compare, f.RowsDiffering, len(st.compared(len(train))), where(st.Requests, f.Row))
	}
	return f
}

// PlantedSite returns the site where case c plants a drift model (in
// either path), or nil when it plants none or is not a transformer case.
func PlantedSite(c spec.Case) *spec.Site {
	st, err := FromCase(c)
	if err != nil {
		return nil
	}
	for _, k := range []Kernels{st.Infer, st.Train} {
		if p, ok := planted(k); ok {
			return &spec.Site{Layer: p.At.Layer, Op: string(p.At.Op)}
		}
	}
	return nil
}
