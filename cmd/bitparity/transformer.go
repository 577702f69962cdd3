package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/transformer"
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

// printShare prints the end-to-end transformer's share of a full campaign
// (verdict.Shared) for people: the counts, each control's finding, each
// unexpected finding with its repro line, and the controls it missed.
func printShare(w io.Writer, s verdict.Shared, trainOn, inferOn string) {
	if trainOn != transformer.CPU || inferOn != transformer.CPU {
		fmt.Fprintf(w, "transformer: train path on %s, inference path on %s\n", trainOn, inferOn)
	}
	r := s.Result
	el := time.Duration(r.Duration)
	fmt.Fprintf(w, "transformer: %d cases in %s (%.0f cases/s), %d invariant (train vs inference path, fixed kernels)\n",
		r.Cases, el.Round(time.Millisecond), float64(r.Cases)/max(1e-9, el.Seconds()), r.InvariantCases)
	for _, f := range r.Findings {
		if f.Expected {
			fmt.Fprintf(w, "  expected (negative control) %s %s after %d cases, %s: %s\n", f.Relation, f.TargetB,
				f.CasesBefore, time.Duration(f.Elapsed).Round(time.Millisecond), f.Message)
			if f.DriftMap != nil && f.DriftMap.Rule != "" {
				fmt.Fprintf(w, "    drift map (%s): %s\n", f.DriftMap.Dim, f.DriftMap.Rule)
			}
		}
	}
	for _, f := range s.Verdict.Unexpected {
		fmt.Fprintf(w, "  UNEXPECTED %s %s: %s\n    repro: %s\n", f.Relation, f.Kind, f.Message, f.Repro)
	}
	for _, name := range s.Verdict.Missed {
		fmt.Fprintf(w, "  MISSED control %s\n", name)
	}
}
