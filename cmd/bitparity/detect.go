package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/bitparity/bitparity/fuzz/detect"
	"github.com/bitparity/bitparity/spec"
)

// detectCmd is `bitparity detect`: the detection table of docs/detection.md
// as Markdown on stdout, one line per run on stderr with -v.
func detectCmd(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("detect", stderr, "")
	models := fs.String("models", "", "comma-separated drift models, each optionally model@relation (default: every CPU drift model of this build, on the first relation it expects)")
	seeds := fs.Int("seeds", 5, "runs per model and distribution (seeds 1..N); the table shows medians")
	maxCases := fs.Int("max-cases", 20000, "cases per run before giving up")
	out := fs.String("out", "bf16", "output (and log-prob compare) dtype forced on every case")
	taps := fs.Bool("taps", false, "compare the fp32 intermediates (taps) too")
	verbose := fs.Bool("v", false, "print every run on stderr")
	caseJSON := fs.String("case", "", "instead of the table: run this case (JSON) with Dist normal and Dist boundary, outputs only, and print how many rows differ")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("detect: unexpected arguments %q", fs.Args())
	}
	if *seeds < 1 {
		return usageErr("detect: --seeds %d, want >= 1", *seeds)
	}
	if *caseJSON != "" {
		var c spec.Case
		if err := json.Unmarshal([]byte(*caseJSON), &c); err != nil {
			return usageErr("detect: --case: %v", err)
		}
		if err := detect.WriteRowsDiffering(context.Background(), stdout, c); err != nil {
			return withCode(spec.ExitInternal, fmt.Errorf("detect: %w", err))
		}
		return nil
	}
	list, err := detect.Models(*models)
	if err != nil {
		return usageErr("detect: --models: %w", err)
	}
	base := detect.Options{Out: spec.DType(*out), MaxCases: *maxCases, Taps: *taps}
	progress := func(m string, d spec.Dist, seed uint64, r detect.Run) {
		if *verbose {
			fmt.Fprintf(stderr, "%s %s seed %d: found=%v cases=%d %.3fs\n", m, d, seed, r.Found, r.Cases, r.Elapsed.Seconds())
		}
	}
	lines, err := detect.Table(context.Background(), list, *seeds, base, progress)
	if err != nil {
		return withCode(spec.ExitInternal, fmt.Errorf("detect: %w", err))
	}
	detect.WriteMarkdown(stdout, lines)
	return nil
}
