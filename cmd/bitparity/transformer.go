package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/spec"
)

// transformerShare is the part of a full campaign's duration given to the
// end-to-end transformer (train path vs inference path): a sixth, at most
// 10 s; its controls are found within about 2 s on 2 cores.
func transformerShare(d time.Duration) time.Duration { return min(d/6, 10*time.Second) }

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

// runTransformer runs the end-to-end transformer campaign for d, prints its
// summary and folds its jobs, cases and unexpected findings into res. The
// error it returns (unexpected findings or controls not found) decides the
// exit code after the main summary is printed.
func runTransformer(ctx context.Context, stdout io.Writer, res *spec.Result, d time.Duration, seed uint64, trainOn, inferOn string) (error, error) {
	if trainOn != transformer.CPU || inferOn != transformer.CPU {
		fmt.Fprintf(stdout, "transformer: train path on %s, inference path on %s\n", trainOn, inferOn)
	}
	ts, err := transformer.Campaign{Duration: d, Seed: seed, TrainBackend: trainOn, InferBackend: inferOn,
		ShrinkBudget: max(100*time.Millisecond, d/10)}.Run(ctx)
	if err != nil {
		return nil, err
	}
	if err := ts.WriteText(stdout); err != nil {
		return nil, err
	}
	res.Targets = append(res.Targets, ts.Jobs...)
	res.Cases += ts.Cases
	res.InvariantCases += ts.InvariantCases
	res.Findings = append(res.Findings, ts.Unexpected...)
	return ts.Err(), nil
}

// e2eRun is the end-to-end transformer's part of a full campaign, run
// before the main campaign: its summary, printed later where the main
// summary expects it, its jobs, cases and unexpected findings, and the
// verdict error of its controls.
type e2eRun struct {
	out  bytes.Buffer
	res  spec.Result
	err  error
	took time.Duration
}

// runTransformerFirst runs the transformer campaign for d (runTransformer)
// into an e2eRun; an error is a failure to run it.
func runTransformerFirst(ctx context.Context, d time.Duration, seed uint64, trainOn, inferOn string) (*e2eRun, error) {
	e := &e2eRun{}
	start := time.Now()
	verdict, err := runTransformer(ctx, &e.out, &e.res, d, seed, trainOn, inferOn)
	if err != nil {
		return nil, err
	}
	e.err, e.took = verdict, time.Since(start)
	return e, nil
}

// fold prints the transformer's summary and adds its jobs, cases and
// unexpected findings to res; it returns the transformer's verdict error.
func (e *e2eRun) fold(stdout io.Writer, res *spec.Result) error {
	stdout.Write(e.out.Bytes())
	res.Targets = append(res.Targets, e.res.Targets...)
	res.Cases += e.res.Cases
	res.InvariantCases += e.res.InvariantCases
	res.Findings = append(res.Findings, e.res.Findings...)
	return e.err
}
