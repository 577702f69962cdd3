package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

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
	corpusDir := fs.String("corpus", "", "add the open findings of the corpus folder or bucket URL `DIR` to tonight's result (after corpus recheck, those still reproduce), and list its scan certificates (text; certificates.txt with --out-dir)")
	saveResult := fs.String("save-result", "", "write tonight's result, with the corpus findings added, to `FILE` (later nights then count them)")
	failOn := fs.String("fail-on", "none", "exit 1 when tonight has unexpected findings (not on negative controls): none, new (new ones), any (new or still failing); with new or any, an interrupted campaign tonight exits 6; scan results: new or any exits 1 when a scan drifted or faulted")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bitparity report [flags] RESULT.json...")
		fmt.Fprintln(stderr, "       bitparity report [flags] SCAN.json...")
		fmt.Fprintln(stderr, "\nReports on campaign result files (bitparity run --json). The latest file by start")
		fmt.Fprintln(stderr, "time is tonight; earlier files mark findings new, still failing or fixed and give the trend.")
		fmt.Fprintln(stderr, "Or on scan results files (bitparity scan --json): every scan, its verdict and drift map.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if err := parseInterspersed(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageErr("report: %v", err)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageErr("report: no result files given")
	}
	mode, err := verdict.ParseFailOn(*failOn)
	if err != nil {
		return usageErr("report: %v", err)
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
	if err := checkOutputDir("out-dir", *outDir); err != nil {
		return err
	}
	if scans, err := scanInputs(fs.Args()); err != nil || scans {
		if err != nil {
			return err
		}
		if *corpusDir != "" || *saveResult != "" {
			return usageErr("report: --corpus and --save-result are for campaign results, not scan results")
		}
		return reportScans(stdout, fs.Args(), *format, *outDir, mode)
	}
	return reportCampaigns(stdout, stderr, reportOpts{paths: fs.Args(), format: *format, outDir: *outDir,
		corpusDir: *corpusDir, saveResult: *saveResult, mode: mode})
}

// reportOpts are report's flags and files for campaign results.
type reportOpts struct {
	paths                                 []string
	format, outDir, corpusDir, saveResult string
	mode                                  verdict.FailOn
}

// reportCampaigns is `bitparity report` on campaign result files: tonight
// (the latest) with the corpus's open findings added, saved when asked,
// reported against the earlier nights, its exit judged by --fail-on
// (verdict.FailOn).
func reportCampaigns(stdout, stderr io.Writer, o reportOpts) error {
	srcs, err := reports.Load(o.paths...)
	if err != nil {
		return withCode(spec.ExitUsage, fmt.Errorf("report: %w", err))
	}
	tonight := reports.Tonight(srcs) // Load refuses no files
	if o.corpusDir != "" {
		n, err := addCorpusFindings(&tonight.Result, o.corpusDir)
		if err != nil {
			return withCode(spec.ExitUsage, fmt.Errorf("report: %w", err))
		}
		fmt.Fprintf(stderr, "report: %d open finding(s) of corpus %s added to %s\n", n, o.corpusDir, tonight.Path)
	}
	if o.saveResult != "" {
		if err := runWriteJSONAtomic(o.saveResult, tonight.Result); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	var opts reports.Options
	if o.corpusDir != "" {
		if opts.Fixed, err = corpusFixed(o.corpusDir); err != nil {
			return withCode(spec.ExitUsage, fmt.Errorf("report: %w", err))
		}
	}
	r, err := reports.BuildWith(srcs, time.Now(), opts)
	if err != nil {
		return withCode(spec.ExitUsage, fmt.Errorf("report: %w", err))
	}
	if o.outDir != "" {
		paths, err := reports.WriteDir(o.outDir, r)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		for _, p := range paths {
			fmt.Fprintln(stdout, p)
		}
	} else if err := reports.Write(stdout, r, o.format); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if o.corpusDir != "" && (o.outDir != "" || o.format == "text") {
		if err := reportCertificates(stdout, o.corpusDir, o.outDir); err != nil { // scan.go
			return withCode(spec.ExitUsage, fmt.Errorf("report: %w", err))
		}
	}
	s := r.Summary
	switch o.mode.Status(s.Unexpected, s.NewUnexpected, s.Interrupted) {
	case verdict.Fail:
		if o.mode == verdict.FailNew {
			return &exitError{code: spec.ExitFinding, err: fmt.Errorf("report: %d new unexpected finding(s)", s.NewUnexpected)}
		}
		return &exitError{code: spec.ExitFinding, err: fmt.Errorf("report: %d unexpected finding(s), %d of them new", s.Unexpected, s.NewUnexpected)}
	case verdict.Interrupted:
		return &exitError{code: spec.ExitInterrupted, err: fmt.Errorf("report: tonight's campaign (%s) was interrupted: not a pass", tonight.Path)}
	}
	return nil
}

// addCorpusFindings appends to res the findings of the open case files
// of the corpus folder or bucket dir (corpus.OpenFindings), and returns
// how many it added.
func addCorpusFindings(res *spec.Result, dir string) (int, error) {
	fs, err := corpus.OpenFindings(context.Background(), dir)
	if err != nil {
		return 0, err
	}
	res.Findings = append(res.Findings, fs...)
	return len(fs), nil
}

// corpusFixed returns the identities of the findings whose case file in
// the corpus folder dir a recheck marked fixed (verdict.FixedIdentities).
func corpusFixed(dir string) (map[string]bool, error) {
	d, err := corpus.OpenDir(dir, false)
	if err != nil {
		return nil, err
	}
	fixed, err := verdict.FixedIdentities(d)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", dir, err)
	}
	return fixed, nil
}

// writeReports writes every format of the report on the result files
// paths into dir, as `bitparity report --out-dir DIR PATHS...` does.
func writeReports(dir string, paths ...string) error {
	srcs, err := reports.Load(paths...)
	if err != nil {
		return err
	}
	r, err := reports.Build(srcs, time.Now())
	if err != nil {
		return err
	}
	_, err = reports.WriteDir(dir, r)
	return err
}

// scanInputs reports whether the report's files are scan results
// (reports.KindOf): all of them, or none; a mix is a usage error.
func scanInputs(paths []string) (bool, error) {
	var scans, campaigns []string
	for _, p := range paths {
		k, err := reports.KindOf(p)
		if err != nil {
			return false, withCode(spec.ExitUsage, fmt.Errorf("report: %w", err))
		}
		if k == reports.KindScan {
			scans = append(scans, p)
		} else {
			campaigns = append(campaigns, p)
		}
	}
	if len(scans) > 0 && len(campaigns) > 0 {
		return false, usageErr("report: %s are scan results and %s campaign results: report on one kind at a time", strings.Join(scans, ", "), strings.Join(campaigns, ", "))
	}
	return len(scans) > 0, nil
}

// reportScans is `bitparity report` on scan results files (bitparity
// scan --json): to stdout in format, or into outDir in every format; with
// --fail-on new or any it exits 1 when a scan drifted or faulted.
func reportScans(stdout io.Writer, paths []string, format, outDir string, mode verdict.FailOn) error {
	srcs, err := reports.LoadScans(paths...)
	if err != nil {
		return withCode(spec.ExitUsage, fmt.Errorf("report: %w", err))
	}
	r := reports.BuildScans(srcs, time.Now())
	if outDir != "" {
		written, err := reports.WriteScansDir(outDir, r)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		for _, p := range written {
			fmt.Fprintln(stdout, p)
		}
	} else if err := reports.WriteScans(stdout, r, format); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	s := r.Summary
	if bad := s.Drift + s.Fault; mode.Status(bad, bad, false) == verdict.Fail {
		return &exitError{code: spec.ExitFinding, err: fmt.Errorf("report: %d scan(s) drifted, %d faulted", s.Drift, s.Fault)}
	}
	return nil
}
