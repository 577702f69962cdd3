package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// reproCmd is `bitparity repro FILE`: replay the case on the targets it
// names (CPU targets here; GPU targets when built with cuda on a GPU) and
// say whether the recorded finding reproduces. Exit codes: 1 the mismatch
// reproduced (or a pass case now fails, or a flaky crash showed on some of
// its replays), 4 could not reproduce (a flaky crash that showed on none), 0 a pass
// case still passes, 2 a bad file or flags, 3 the case could not run here.
func reproCmd(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("repro", flag.ContinueOnError)
	fs.SetOutput(stderr)
	maxElems := fs.Int("max-elements", spec.MaxElements, "refuse a case whose batches need more input values (a file from elsewhere may ask for GiBs)")
	ex := runExecFlags(fs) // --exec: the adapters of the case's exec: targets
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bitparity repro [flags] FILE\n\nreplays a case file (from a corpus folder, a bundle or another team) on this machine.\nA case on an exec: target needs its adapter: --exec CMD (the case file records the command line; it is never run from the file).")
		fs.PrintDefaults()
	}
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("repro: want exactly one case FILE")
	}
	path := fs.Arg(0)
	f, err := corpus.ReadFile(path)
	if err != nil {
		return withCode(spec.ExitUsage, fmt.Errorf("repro: %w", err))
	}
	name, _ := f.Name()
	if e := f.Case.Elements(); e > *maxElems {
		return usageErr("repro: %s needs %d input values, above -max-elements %d (raise it to run the case)", path, e, *maxElems)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	served, err := ex.start(ctx, "repro")
	if err != nil {
		return err
	}
	defer external.CloseAll()
	if m := missingAdapters(f.Case, f.Adapters); len(m) > 0 {
		if len(served) > 0 {
			m = append(m, "the --exec given serve "+strings.Join(served, ", "))
		}
		return usageErr("repro: %s needs an adapter:\n  %s", path, strings.Join(m, "\n  "))
	}
	fmt.Fprintf(stdout, "case %s: %s\n", name, describe(f.Case))
	if f.Finding != nil {
		printFinding(stdout, "recorded, signature "+spec.FindingID(*f.Finding), f.Finding)
	} else {
		fmt.Fprintln(stdout, "recorded: no finding (a case that must pass)")
	}
	here := hereEnv()
	diff := append(corpus.EnvDiff(f.Env, here), adapterDiff(f.Adapters)...)
	missing := missingTargets(f.Case)
	o, err := corpus.Replay(ctx, f, composites()...)
	if err != nil {
		printReproEnv(stdout, diff, missing)
		if len(missing) > 0 {
			return withCode(spec.ExitInternal, fmt.Errorf("repro: cannot run %s here: %s", name, strings.Join(missing, "; ")))
		}
		if fuzz.IsTargetFailure(err) {
			return withCode(spec.ExitInternal, fmt.Errorf("repro: %s: %w", name, err))
		}
		// the case itself cannot run (a relation that takes other targets,
		// a shape over the memory budget): bad input
		return withCode(spec.ExitUsage, fmt.Errorf("repro: %s: %w", name, err))
	}
	if o.Finding != nil {
		printFinding(stdout, "here", o.Finding)
		if f.Finding != nil && o.SameSpot {
			fmt.Fprintln(stdout, "  same row, column and bits as recorded")
		}
	}
	printReproEnv(stdout, diff, missing)
	return reproVerdict(stdout, f, o, len(diff) > 0)
}

// printReproEnv prints how this machine differs from the recorded
// environment (diff) and the case's targets it lacks (missing).
func printReproEnv(stdout io.Writer, diff, missing []string) {
	if len(diff) == 0 {
		fmt.Fprintln(stdout, "environment: as recorded")
	} else {
		fmt.Fprintln(stdout, "environment differs from the recorded one:")
		for _, d := range diff {
			fmt.Fprintf(stdout, "  %s\n", d)
		}
	}
	for _, m := range missing {
		fmt.Fprintf(stdout, "  %s\n", m)
	}
}

// reproVerdict prints the replay's outcome o of the case file f in one
// word and its reading, and returns repro's exit: 1 reproduced, changed,
// a regression or a flaky crash that showed; 4 not reproduced; nil a pass
// case that passes. envDiffers says the environment is not as recorded.
func reproVerdict(stdout io.Writer, f *corpus.File, o *corpus.Outcome, envDiffers bool) error {
	switch o.Verdict {
	case corpus.Reproduced:
		if f.Finding == nil {
			fmt.Fprintf(stdout, "REGRESSION: the case should pass but shows a %s (%v)\n", o.Finding.Kind, o.Elapsed.Round(1e6))
		} else {
			fmt.Fprintf(stdout, "REPRODUCED: the %s shows here too, signature %s (%v)\n", o.Finding.Kind, spec.FindingID(*f.Finding), o.Elapsed.Round(1e6))
		}
		return &exitError{code: spec.ExitFinding}
	case corpus.Changed:
		fmt.Fprintf(stdout, "REPRODUCED, CHANGED: a %s here where the %s with signature %s was recorded (another bug, or the same one described differently)\n",
			o.Finding.Kind, f.Finding.Kind, spec.FindingID(*f.Finding))
		return &exitError{code: spec.ExitFinding}
	case corpus.Flaky:
		fmt.Fprintf(stdout, "FLAKY: the recorded crash showed on %d of %d replays here (%v): it depends on more than the case (the adapter's state or request count, timing); not fixed.\n",
			o.Crashes, o.Replays, o.Elapsed.Round(1e6))
		if o.Crashes > 0 {
			return &exitError{code: spec.ExitFinding}
		}
		return &exitError{code: spec.ExitNotReproduced}
	case corpus.NotReproduced:
		fmt.Fprintf(stdout, "COULD NOT REPRODUCE: every compared row is bitwise equal here (%v).\n", o.Elapsed.Round(1e6))
		if tapFinding(f) {
			fmt.Fprintln(stdout, "The recorded difference was in fp32 intermediates (taps), not in the output bits: a target that exposes no taps here (GPU kernels, external processes) can show it only where it flips an output bit.")
		}
		if envDiffers {
			fmt.Fprintln(stdout, "The environment differences above may explain it (another adapter, GPU, driver or kernel build).")
		} else {
			fmt.Fprintln(stdout, "The environment is as recorded: the finding may be fixed, or depend on something not fingerprinted.")
		}
		return &exitError{code: spec.ExitNotReproduced}
	}
	fmt.Fprintf(stdout, "PASSED: the case passes, as recorded (%v)\n", o.Elapsed.Round(1e6))
	return nil
}

// missingTargets names the case's targets this build does not have (a
// model route started by --exec it has).
func missingTargets(c spec.Case) []string {
	have := map[string]bool{}
	for _, n := range target.Names() {
		have[n] = true
	}
	var out []string
	for _, t := range c.Targets {
		if !have[t] && !external.IsModel(t) {
			hint := "see 'bitparity list'"
			if strings.HasPrefix(t, "cuda") || strings.HasPrefix(t, "gpu") || strings.HasPrefix(t, "cublas") {
				hint = "a GPU target: build with -tags cuda on a machine with a GPU (make build)"
			}
			out = append(out, fmt.Sprintf("target %s: not in this build (%s)", t, hint))
		}
	}
	return out
}

// tapFinding reports whether f's finding was seen in fp32 intermediates
// (taps) rather than in the outputs, as the relation recorded it.
func tapFinding(f *corpus.File) bool { return f.Finding != nil && f.Finding.OnTaps }
