package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/spec"
)

func init() {
	register("report", command{
		Summary: "write text, JSON, JUnit, Markdown or HTML reports from result files",
		Run:     runReport,
	})
}

// runReport is `bitparity report [flags] RESULT.json...`: one report over
// the given result files (the latest by start time is tonight, the others
// give the status across nights and the trend), to stdout in one format or
// into a folder in every format.
func runReport(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var names []string
	for _, f := range reports.Formats {
		names = append(names, f.Name)
	}
	format := fs.String("format", "text", "output format on stdout: "+strings.Join(names, ", "))
	outDir := fs.String("out-dir", "", "write every format into `DIR` (report.txt, report.json, junit.xml, summary.md, report.html) instead of stdout")
	failOn := fs.String("fail-on", "none", "exit 1 when tonight has unexpected findings (not on negative controls): none, new (new ones), any (new or still failing)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bitparity report [flags] RESULT.json...")
		fmt.Fprintln(stderr, "\nReports on campaign result files (bitparity run --json). The latest file by start")
		fmt.Fprintln(stderr, "time is tonight; earlier files mark findings new, still failing or fixed and give the trend.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageErr("report: %v", err)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageErr("report: no result files given")
	}
	if *failOn != "none" && *failOn != "new" && *failOn != "any" {
		return usageErr("report: --fail-on %q: want none, new or any", *failOn)
	}
	if *outDir == "" {
		known := false
		for _, n := range names {
			known = known || n == *format
		}
		if !known {
			return usageErr("report: --format %q: want one of %s", *format, strings.Join(names, ", "))
		}
	}
	srcs, err := reports.Load(fs.Args()...)
	if err != nil {
		return withCode(spec.ExitUsage, fmt.Errorf("report: %w", err))
	}
	r, err := reports.Build(srcs, time.Now())
	if err != nil {
		return withCode(spec.ExitUsage, fmt.Errorf("report: %w", err))
	}
	if *outDir != "" {
		paths, err := reports.WriteDir(*outDir, r)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		for _, p := range paths {
			fmt.Fprintln(stdout, p)
		}
	} else if err := reports.Write(stdout, r, *format); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	s := r.Summary
	switch {
	case *failOn == "new" && s.NewUnexpected > 0:
		return &exitError{code: spec.ExitFinding, err: fmt.Errorf("report: %d new unexpected finding(s)", s.NewUnexpected)}
	case *failOn == "any" && s.Unexpected > 0:
		return &exitError{code: spec.ExitFinding, err: fmt.Errorf("report: %d unexpected finding(s), %d of them new", s.Unexpected, s.NewUnexpected)}
	}
	return nil
}
