package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/explain"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
)

// explainCmd is `bitparity explain CASE`: CASE is a case file (as repro
// reads) or a case as JSON (as a finding's repro line prints). It finds or
// recomputes the finding and its drift map and prints, for each class,
// the schedules of the op's schedule space that reproduce the target's
// bits, or that none does. Exit codes: 0 explained (every class has its
// answer, "no schedule" included), 2 bad input or a case without a
// finding, 3 a target that failed.
func explainCmd(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("explain", stderr, "usage: bitparity explain [--exec CMD | --kernel MANIFEST] [flags] CASE\n\nCASE is a case file or a case as JSON; the case must show a finding with a drift map (batch invariance, padding, oracle or path parity). A case on an adapter or a user kernel takes the same --exec or --kernel as run.")
	jsonPath := fs.String("json", "", "also write the explanation as JSON to this file")
	seed := fs.Uint64("seed", 0, "seed of the probe inputs (0: the fixed default)")
	execs := runExecFlags(fs) // --exec: the case's adapter, as for run and repro (exec.go)
	wk := runWorkerFlags(fs)  // --kernel: the case's user kernel, in a worker (kernel.go)
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("explain: want exactly one CASE (a case file or a case as JSON)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	defer external.CloseAll()
	if _, err := wk.start(stderr); err != nil {
		return err
	}
	if _, err := execs.start(ctx, "explain"); err != nil {
		return err
	}
	f, err := explainFinding(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "finding: %s, %s on %s (%s)\n", f.Kind, f.Relation, strings.Join(f.Case.Targets, ", "), f.Case.Op)
	fmt.Fprintf(stdout, "drift map: %s\n", words.Drift(f.DriftMap))
	ex, err := explain.Finding(ctx, f, explain.Options{Seed: *seed})
	if err != nil {
		return explainErr(err)
	}
	fmt.Fprint(stdout, ex.Text())
	if *jsonPath != "" {
		if err := atomicfile.WriteJSON(*jsonPath, ex); err != nil {
			return withCode(spec.ExitInternal, fmt.Errorf("explain: %w", err))
		}
	}
	return nil
}

// explainFinding reads arg (a case file or a case as JSON,
// corpus.ReadCase) and returns its finding with a drift map (explain.Case:
// running the case and the sweep when the file holds none).
func explainFinding(ctx context.Context, arg string) (*spec.Finding, error) {
	c, f, err := corpus.ReadCase(arg)
	if err != nil {
		return nil, usageErr("explain: %w", err)
	}
	f, err = explain.Case(ctx, c, f, external.Composites()...)
	return f, explainErr(err)
}

// explainErr maps an error to its exit code: a target failure is 3,
// anything else about the case is bad input (2).
func explainErr(err error) error {
	if relate.IsTargetFailure(err) {
		return withCode(spec.ExitInternal, err)
	}
	return withCode(spec.ExitUsage, err)
}

// explainAll explains every mismatch finding of fs (run --explain,
// explain.All), with a line on w for each that could not be explained.
func explainAll(ctx context.Context, w io.Writer, fs []spec.Finding) {
	for _, err := range explain.All(ctx, fs) {
		fmt.Fprintln(w, err)
	}
}
