package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/verdict"
)

// defaultTransformerOn is --transformer-on's default: the trainer on the
// CPU oracle and the engine on the GPU where this build has the cuda
// backend (the two paths on different devices must still agree bitwise),
// both on the CPU otherwise.
func defaultTransformerOn() string {
	if slices.Contains(transformer.Backends(), "cuda") {
		return "cpu,cuda"
	}
	return transformer.CPU
}

// parseTransformerOn reads --transformer-on: "TRAIN,INFER" or one backend
// for both paths, each one this build registered.
func parseTransformerOn(v string) (train, infer string, err error) {
	names := strings.Split(v, ",")
	if len(names) == 1 {
		names = append(names, names[0])
	}
	if len(names) != 2 {
		return "", "", fmt.Errorf("%q: want TRAIN,INFER or one backend", v)
	}
	for _, n := range names {
		if !slices.Contains(transformer.Backends(), n) {
			return "", "", fmt.Errorf("backend %q: this build has %s", n, strings.Join(transformer.Backends(), ", "))
		}
	}
	return names[0], names[1], nil
}

// composites are the composite ops' sources a case may need (fuzz.Check
// takes them among its targets): the end-to-end transformer (any backends
// the case names) and the model routes this run started.
func composites() []target.Target {
	return []target.Target{transformer.Source("", ""), external.ModelChecker()}
}

// runTransformer runs the end-to-end transformer's share
// (transformer.ShareCampaign) for d, prints its summary (writeTransformer)
// and folds its jobs, cases and unexpected findings into res. Its verdict
// (verdict.Share) decides the exit after the main summary is printed
// (verdict.WithShare).
func runTransformer(ctx context.Context, stdout io.Writer, res *spec.Result, d time.Duration, seed uint64, trainOn, inferOn string, hooks e2eHooks) (*verdict.Verdict, error) {
	if trainOn != transformer.CPU || inferOn != transformer.CPU {
		fmt.Fprintf(stdout, "transformer: train path on %s, inference path on %s\n", trainOn, inferOn)
	}
	c := transformer.ShareCampaign(d, seed, trainOn, inferOn)
	c.Progress = hooks.progress
	unexpected := func(keep func(spec.Finding)) func(spec.Finding) {
		if keep == nil {
			return nil
		}
		return func(f spec.Finding) {
			if !f.Expected {
				keep(f)
			}
		}
	}
	c.OnFound, c.OnFinding = unexpected(hooks.found), unexpected(hooks.shrunk)
	tr, err := c.Run(ctx)
	if tr == nil || (err != nil && ctx.Err() == nil) {
		return nil, err
	}
	v, err := writeTransformer(stdout, tr)
	if err != nil {
		return nil, err
	}
	res.Targets = append(res.Targets, tr.Targets...)
	res.Cases += tr.Cases
	res.InvariantCases += tr.InvariantCases
	res.Findings = append(res.Findings, v.Unexpected...)
	return v, nil
}

// writeTransformer writes the transformer campaign's result for people: the
// counts, each control's finding (Expected), each unexpected finding with
// its repro line, and the controls missed (verdict.Share: a job that must
// find and found nothing). It returns the share's verdict.
func writeTransformer(w io.Writer, r *spec.Result) (*verdict.Verdict, error) {
	v := verdict.Share(r)
	bw := bufio.NewWriter(w)
	el := time.Duration(r.Duration)
	fmt.Fprintf(bw, "transformer: %d cases in %s (%.0f cases/s), %d invariant (train vs inference path, fixed kernels)\n",
		r.Cases, el.Round(time.Millisecond), float64(r.Cases)/max(1e-9, el.Seconds()), r.InvariantCases)
	for _, f := range r.Findings {
		if f.Expected {
			fmt.Fprintf(bw, "  expected (negative control) %s %s after %d cases, %s: %s\n", f.Relation, f.TargetB,
				f.CasesBefore, time.Duration(f.Elapsed).Round(time.Millisecond), f.Message)
			if f.DriftMap != nil && f.DriftMap.Rule != "" {
				fmt.Fprintf(bw, "    drift map (%s): %s\n", f.DriftMap.Dim, f.DriftMap.Rule)
			}
		}
	}
	for _, f := range v.Unexpected {
		fmt.Fprintf(bw, "  UNEXPECTED %s %s: %s\n    repro: %s\n", f.Relation, f.Kind, f.Message, f.Repro)
	}
	for _, name := range missedInOrder(v, r.Targets) {
		fmt.Fprintf(bw, "  MISSED control %s\n", name)
	}
	return v, bw.Flush()
}

// missedInOrder are v's missed controls in the order of the share's jobs.
func missedInOrder(v *verdict.Verdict, jobs []spec.TargetStats) []string {
	var missed []string
	for _, t := range jobs {
		if slices.Contains(v.Missed, t.Target) {
			missed = append(missed, t.Target)
		}
	}
	return missed
}

// shareErr says why the transformer's share failed a full campaign: its
// unexpected findings and the controls it missed.
func shareErr(v *verdict.Verdict, jobs []spec.TargetStats) error {
	var msgs []string
	if len(v.Unexpected) > 0 {
		msgs = append(msgs, fmt.Sprintf("%d unexpected transformer finding(s)", len(v.Unexpected)))
	}
	if missed := missedInOrder(v, jobs); len(missed) > 0 {
		msgs = append(msgs, "transformer control(s) not found: "+strings.Join(missed, ", "))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// e2eRun is the end-to-end transformer's part of a full campaign, run
// before the main campaign: its summary, printed later where the main
// summary expects it, its jobs, cases and unexpected findings, and the
// share's verdict (verdict.Share).
type e2eRun struct {
	out     bytes.Buffer
	res     spec.Result
	verdict *verdict.Verdict
	took    time.Duration
}

// runTransformerFirst runs the transformer campaign for d (runTransformer)
// into an e2eRun; an error is a failure to run it.
func runTransformerFirst(ctx context.Context, d time.Duration, seed uint64, trainOn, inferOn string, hooks e2eHooks) (*e2eRun, error) {
	e := &e2eRun{}
	start := time.Now()
	v, err := runTransformer(ctx, &e.out, &e.res, d, seed, trainOn, inferOn, hooks)
	if err != nil {
		return nil, err
	}
	e.verdict, e.took = v, time.Since(start)
	return e, nil
}

// e2eHooks keep the transformer share's work as it happens: found and
// shrunk receive each unexpected finding as first found and as shrunk (a
// verdict.Recorder's Found and Shrunk, so a signal during the share loses
// none of them), progress the share's counts. Each may be nil.
type e2eHooks struct {
	found, shrunk func(spec.Finding)
	progress      func(fuzz.Stats)
}

// fold prints the transformer's summary and adds its jobs, cases and
// unexpected findings to res; it returns the share's verdict.
func (e *e2eRun) fold(stdout io.Writer, res *spec.Result) *verdict.Verdict {
	stdout.Write(e.out.Bytes())
	res.Targets = append(res.Targets, e.res.Targets...)
	res.Cases += e.res.Cases
	res.InvariantCases += e.res.InvariantCases
	res.Findings = append(res.Findings, e.res.Findings...)
	return e.verdict
}
