package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
)

// reproCmd is `bitparity repro FILE`: replay the case on the targets it
// names (CPU targets here; GPU targets when built with cuda on a GPU) and
// say whether the recorded finding reproduces. Exit codes: 1 the mismatch
// reproduced (or a pass case now fails, or a flaky crash showed on some of
// its replays), 4 could not reproduce (a flaky crash that showed on none), 0 a pass
// case still passes, 2 a bad file or flags, 3 the case could not run here.
func reproCmd(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("repro", stderr, "usage: bitparity repro [flags] FILE\n\nreplays a case file (from a corpus folder, a bundle or another team) on this machine.\nA case on an exec: target needs its adapter: --exec CMD (the case file records the command line; it is never run from the file).")
	maxElems := fs.Int("max-elements", spec.MaxElements, "refuse a case whose batches need more input values (a file from elsewhere may ask for GiBs)")
	ex := runExecFlags(fs) // --exec: the adapters of the case's exec: targets
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
	if m := external.Missing(f.Case, f.Adapters); len(m) > 0 {
		if len(served) > 0 {
			m = append(m, "the --exec given serve "+strings.Join(served, ", "))
		}
		return usageErr("repro: %s needs an adapter:\n  %s", path, strings.Join(m, "\n  "))
	}
	fmt.Fprintf(stdout, "case %s: %s\n", name, corpus.Describe(f.Case))
	fmt.Fprintln(stdout, f.Recorded())
	here := gpu.HereEnv()
	diff := append(corpus.EnvDiff(f.Env, here), external.Differ(f.Adapters)...)
	missing := external.NotBuilt(f.Case)
	o, err := corpus.Replay(ctx, f, scan.Checkers()...)
	if err != nil {
		fmt.Fprint(stdout, corpus.EnvWords(diff, missing))
		if len(missing) > 0 {
			return withCode(spec.ExitInternal, fmt.Errorf("repro: cannot run %s here: %s", name, strings.Join(missing, "; ")))
		}
		if relate.IsTargetFailure(err) {
			return withCode(spec.ExitInternal, fmt.Errorf("repro: %s: %w", name, err))
		}
		// the case itself cannot run (a relation that takes other targets,
		// a shape over the memory budget): bad input
		return withCode(spec.ExitUsage, fmt.Errorf("repro: %s: %w", name, err))
	}
	if o.Finding != nil {
		fmt.Fprintf(stdout, "here: %s\n", words.Finding(*o.Finding))
		if f.Finding != nil && o.SameSpot {
			fmt.Fprintln(stdout, "  same row, column and bits as recorded")
		}
	}
	fmt.Fprint(stdout, corpus.EnvWords(diff, missing))
	fmt.Fprint(stdout, o.Words(f, len(diff) > 0))
	if code := o.Code(); code != spec.ExitOK {
		return &exitError{code: code}
	}
	return nil
}
