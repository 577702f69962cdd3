package transformer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// Campaign runs transformer cases for a while, round-robin over its jobs:
//
//   - "invariant/logprob_parity" and "invariant/path_parity": fixed kernels
//     in both paths over fuzzed models and request mixes; any finding is
//     unexpected;
//   - "drift/<model>": the drift model planted at a random site of its
//     kind in both paths, under path parity; a negative control that must
//     be found, localised to the planted site (else the finding is
//     unexpected); retired once found;
//   - "misuse/compare_fp32" and "misuse/zero_fill": the seed's harness
//     bugs (log-probs compared in fp32 against the bf16 training dtype;
//     unreported positions zero-filled and compared); controls that must
//     be flagged as misuse; retired once found.
//
// The zero value runs 10 s from seed 0 with no case limit.
type Campaign struct {
	Duration time.Duration
	Seed     uint64
	MaxCases int64
	// ShrinkBudget bounds the time spent minimising one control's finding
	// (0: 3 s); NoShrink reports findings as first found.
	ShrinkBudget time.Duration
	NoShrink     bool
	// ControlCases is how many cases each control (a planted drift model
	// or a misuse) gets before it counts as missed, even past Duration
	// (0: 12). Whether a control is found then depends on the seed, not on
	// how fast the machine is.
	ControlCases int64
	// TrainBackend and InferBackend name the backends the two paths run
	// on (WithBackends; empty: the CPU oracle).
	TrainBackend, InferBackend string
}

// minimal shrinks the case of finding f (from case c) to one that gives a
// finding of the same kind at the same site (Minimize) and returns that
// finding, with Original, ShrinkSteps, Elapsed, CasesBefore and ToMinimal
// set.
func minimal(ctx context.Context, f *spec.Finding, c spec.Case, budget time.Duration) (*spec.Finding, error) {
	if budget <= 0 {
		budget = 3 * time.Second
	}
	start := time.Now()
	site := func(m string) string {
		_, rest, _ := strings.Cut(m, "first divergence: ")
		at, _, _ := strings.Cut(rest, " ")
		return at
	}
	keep := func(g *spec.Finding) bool { return g.Kind == f.Kind && site(g.Message) == site(f.Message) }
	small, steps, err := Minimize(ctx, c, keep, budget)
	if err != nil || steps == 0 {
		return f, err
	}
	g, err := Check(ctx, small)
	if err != nil || g == nil {
		return f, err
	}
	orig := c
	g.Original = &orig
	g.ShrinkSteps = steps
	g.Elapsed, g.CasesBefore = f.Elapsed, f.CasesBefore
	g.ToMinimal = spec.Duration(time.Since(start))
	return g, nil
}

// Summary is what a campaign did.
type Summary struct {
	Elapsed time.Duration
	Cases   int64
	// InvariantCases counts the cases of the invariant jobs (all of which
	// agreed bitwise unless Unexpected says otherwise).
	InvariantCases int64
	// Jobs has one entry per job (Target is the job name; Invariant is
	// true for the jobs that must hold).
	Jobs []spec.TargetStats
	// Findings holds the controls' findings, Unexpected the findings of
	// invariant jobs and of controls localised to the wrong site.
	Findings, Unexpected []spec.Finding
	// Missed lists the controls not found in the time given.
	Missed []string
}

type job struct {
	name      string
	rel       string
	invariant bool
	gen       Gen
	edit      func(c spec.Case, seed uint64) (spec.Case, bool) // false: skip this seed
	check     func(f *spec.Finding, c spec.Case) error         // nil: f must be nil
	cases     int64
	found     bool
}

// jobs lists a campaign's jobs in round-robin order.
func jobs() []*job {
	js := []*job{
		{name: "invariant/" + spec.RelLogProbParity, rel: spec.RelLogProbParity, invariant: true},
		{name: "invariant/" + spec.RelPathParity, rel: spec.RelPathParity, invariant: true, edit: func(c spec.Case, seed uint64) (spec.Case, bool) {
			if seed%4 == 0 { // KV lengths past 48
				c = (Gen{MinSeqLen: 56}).Case(seed)
			}
			c.Relation = spec.RelPathParity
			return c, true
		}},
	}
	for _, m := range DriftModels {
		js = append(js, &job{name: "drift/" + m.Name, rel: spec.RelPathParity, gen: m.Needs,
			edit: func(c spec.Case, seed uint64) (spec.Case, bool) {
				sites := PlantSites(m.Kind, c.Shape.Rows)
				c.Relation = spec.RelPathParity
				c, err := Plant(c, m.Name, sites[newRNG(seed, 99, 0).intn(len(sites))])
				return c, err == nil
			},
			check: func(f *spec.Finding, c spec.Case) error {
				_, at, _ := strings.Cut(c.Targets[1], "@")
				if f.Kind != spec.KindMismatch || !strings.Contains(f.Message, "first divergence: "+at+" ") {
					return fmt.Errorf("planted at %s, found a %s: %s", at, f.Kind, f.Message)
				}
				return nil
			}})
	}
	misuse := func(f *spec.Finding, _ spec.Case) error {
		if f.Kind != spec.KindMisuse {
			return fmt.Errorf("want misuse, found a %s: %s", f.Kind, f.Message)
		}
		return nil
	}
	js = append(js,
		&job{name: "misuse/compare_fp32", rel: spec.RelLogProbParity, check: misuse, edit: func(c spec.Case, _ uint64) (spec.Case, bool) {
			c.Compare = spec.FP32
			return c, true
		}},
		&job{name: "misuse/zero_fill", rel: spec.RelLogProbParity, check: misuse, edit: func(c spec.Case, _ uint64) (spec.Case, bool) {
			if len(c.Rel.Mask) == 0 {
				return c, false // the engine reported every position
			}
			c.Rel.Mask = nil
			return c, true
		}})
	return js
}

// Run runs the campaign until Duration has passed or MaxCases cases have
// run, and then on until every control is found or has had ControlCases
// cases, or until ctx ends. A case that errors stops the campaign with the
// error.
func (cp Campaign) Run(ctx context.Context) (*Summary, error) {
	dur := cp.Duration
	if dur <= 0 {
		dur = 10 * time.Second
	}
	start := time.Now()
	deadline := start.Add(dur)
	js := jobs()
	s := &Summary{}
	controlCases := cp.ControlCases
	if controlCases <= 0 {
		controlCases = 12
	}
	// owed: a control not found yet that has had fewer than controlCases.
	owed := func(j *job) bool { return !j.invariant && !j.found && j.cases < controlCases }
	for i := uint64(0); ; i++ {
		if err := ctx.Err(); err != nil {
			break
		}
		inTime := time.Now().Before(deadline) && (cp.MaxCases == 0 || s.Cases < cp.MaxCases)
		live := 0
		for _, j := range js {
			if (inTime && (j.invariant || !j.found)) || owed(j) {
				live++
			}
		}
		if live == 0 {
			break
		}
		j := js[i%uint64(len(js))]
		if !j.invariant && j.found {
			continue
		}
		if !inTime && !owed(j) {
			continue // past the budget, only controls still owed cases run
		}
		seed := splitmix(cp.Seed ^ splitmix(i))
		c := j.gen.Case(seed)
		if j.edit != nil {
			var ok bool
			if c, ok = j.edit(c, seed); !ok {
				continue
			}
		}
		c = WithBackends(c, cp.TrainBackend, cp.InferBackend)
		f, err := Check(ctx, c)
		if err != nil {
			return s, fmt.Errorf("transformer campaign: %s: %w", j.name, err)
		}
		s.Cases++
		j.cases++
		if j.invariant {
			s.InvariantCases++
		}
		if f == nil {
			continue
		}
		f.Elapsed = spec.Duration(time.Since(start))
		f.CasesBefore = s.Cases
		if j.check == nil {
			s.Unexpected = append(s.Unexpected, *f)
			continue
		}
		j.found = true
		if err := j.check(f, c); err != nil {
			f.Message = j.name + ": " + err.Error()
			s.Unexpected = append(s.Unexpected, *f)
			continue
		}
		if !cp.NoShrink {
			if f, err = minimal(ctx, f, c, cp.ShrinkBudget); err != nil {
				return s, fmt.Errorf("transformer campaign: %s: shrink: %w", j.name, err)
			}
		}
		s.Findings = append(s.Findings, *f)
	}
	s.Elapsed = time.Since(start)
	for _, j := range js {
		st := spec.TargetStats{Target: "transformer/" + j.name, Cases: j.cases, Invariant: j.invariant,
			Op: CaseOp, Relations: []string{j.rel}}
		if j.found {
			st.Findings = 1
		}
		if !j.invariant && !j.found {
			s.Missed = append(s.Missed, "transformer/"+j.name)
		}
		s.Jobs = append(s.Jobs, st)
	}
	return s, nil
}

// Err is nil when the campaign went as it must: no unexpected finding and
// every control found; otherwise it says what went wrong.
func (s *Summary) Err() error {
	var msgs []string
	if n := len(s.Unexpected); n > 0 {
		msgs = append(msgs, fmt.Sprintf("%d unexpected transformer finding(s)", n))
	}
	if len(s.Missed) > 0 {
		msgs = append(msgs, "transformer control(s) not found: "+strings.Join(s.Missed, ", "))
	}
	if msgs == nil {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

// WriteText writes the summary for people: the counts, each control's
// finding (expected), each unexpected finding with its repro line, and the
// missed controls.
func (s *Summary) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "transformer: %d cases in %s (%.0f cases/s), %d invariant (train vs inference path, fixed kernels)\n",
		s.Cases, s.Elapsed.Round(time.Millisecond), float64(s.Cases)/max(1e-9, s.Elapsed.Seconds()), s.InvariantCases)
	for _, f := range s.Findings {
		fmt.Fprintf(bw, "  expected (negative control) %s %s after %d cases, %s: %s\n", f.Relation, f.TargetB,
			f.CasesBefore, time.Duration(f.Elapsed).Round(time.Millisecond), f.Message)
		if f.DriftMap != nil && f.DriftMap.Rule != "" {
			fmt.Fprintf(bw, "    drift map (%s): %s\n", f.DriftMap.Dim, f.DriftMap.Rule)
		}
	}
	for _, f := range s.Unexpected {
		fmt.Fprintf(bw, "  UNEXPECTED %s %s: %s\n    repro: %s\n", f.Relation, f.Kind, f.Message, f.Repro)
	}
	for _, m := range s.Missed {
		fmt.Fprintf(bw, "  MISSED control %s\n", m)
	}
	return bw.Flush()
}
