package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/bitparity/bitparity/fuzz/detect"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// detectCmd is `bitparity detect`: the detection table of docs/detection.md
// as Markdown on stdout, one line per run on stderr with -v.
func detectCmd(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("detect", flag.ContinueOnError)
	fs.SetOutput(stderr)
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
		for _, d := range []spec.Dist{spec.DistNormal, spec.DistBoundary} {
			c.Dist = d
			n, msg, err := detect.RowsDiffering(context.Background(), c)
			if err != nil {
				return &exitError{code: spec.ExitInternal, err: fmt.Errorf("detect: %w", err)}
			}
			fmt.Fprintf(stdout, "%s: %d rows differ (outputs only) %s\n", d, n, msg)
		}
		return nil
	}
	list, err := detectModels(*models)
	if err != nil {
		return err
	}
	base := detect.Options{Out: spec.DType(*out), MaxCases: *maxCases, Taps: *taps}
	progress := func(m string, d spec.Dist, seed uint64, r detect.Run) {
		if *verbose {
			fmt.Fprintf(stderr, "%s %s seed %d: found=%v cases=%d %.3fs\n", m, d, seed, r.Found, r.Cases, r.Elapsed.Seconds())
		}
	}
	lines, err := detect.Table(context.Background(), list, *seeds, base, progress)
	if err != nil {
		return &exitError{code: spec.ExitInternal, err: fmt.Errorf("detect: %w", err)}
	}
	fmt.Fprintf(stdout, "| drift model | relation | random: cases | random: s | boundary: cases | boundary: s |\n")
	fmt.Fprintf(stdout, "|---|---|---:|---:|---:|---:|\n")
	cell := func(m detect.Median) (string, string) {
		c := fmt.Sprint(m.Cases)
		if m.Found*2 <= m.Runs { // the median run found nothing
			c = ">" + c
		}
		if m.Found < m.Runs {
			c += fmt.Sprintf(" (%d/%d found)", m.Found, m.Runs)
		}
		return c, fmt.Sprintf("%.3f", m.Seconds)
	}
	for _, l := range lines {
		nc, ns := cell(l.Normal)
		bc, bs := cell(l.Boundary)
		fmt.Fprintf(stdout, "| %s | %s | %s | %s | %s | %s |\n", l.Model, l.Relation, nc, ns, bc, bs)
	}
	return nil
}

// detectModels is --models: each drift model named (model@relation), or
// with none every CPU drift model of this build that runs without asking.
func detectModels(models string) ([]detect.Model, error) {
	var list []detect.Model
	if models != "" {
		for _, m := range strings.Split(models, ",") {
			name, rel, _ := strings.Cut(m, "@")
			t, err := target.Lookup(name)
			if err != nil {
				return nil, usageErr("detect: --models: %v", err)
			}
			if len(t.Info().Expect) == 0 {
				return nil, usageErr("detect: --models: %s is not a drift model (bitparity list shows them)", name)
			}
			list = append(list, detect.Model{Name: name, Relation: rel})
		}
	} else {
		for _, n := range target.Names() {
			t, err := target.Lookup(n)
			if err == nil && !t.Info().Invariant && !t.Info().OnRequest && len(t.Info().Expect) > 0 && t.Info().Device == "cpu" {
				list = append(list, detect.Model{Name: n})
			}
		}
	}
	return list, nil
}
