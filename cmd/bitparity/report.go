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
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

// reportOpts are report's flags and files.
type reportOpts struct {
	paths                                 []string
	format, outDir, corpusDir, saveResult string
	mode                                  verdict.FailOn
}

// runReport is `bitparity report [flags] RESULT.json...`: one report over
// the given result files (the latest by start time is tonight, the others
// give the status across nights and the trend), to stdout in one format or
// into a folder in every format.
func runReport(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("report", stderr, `usage: bitparity report [flags] RESULT.json...
       bitparity report [flags] SCAN.json...

Reports on campaign result files (bitparity run --json). The latest file by start
time is tonight; earlier files mark findings new, still failing or fixed and give the trend.
Or on scan results files (bitparity scan --json): every scan, its verdict and drift map.

flags:`)
	var o reportOpts
	fs.StringVar(&o.format, "format", "text", "output format on stdout: "+strings.Join(reports.FormatNames(), ", "))
	fs.StringVar(&o.outDir, "out-dir", "", "write every format into `DIR` (report.txt, report.json, junit.xml, summary.md, report.html) instead of stdout")
	fs.StringVar(&o.corpusDir, "corpus", "", "add the open findings of the corpus folder or bucket URL `DIR` to tonight's result (after corpus recheck, those still reproduce), and list its scan certificates (text; certificates.txt with --out-dir)")
	fs.StringVar(&o.saveResult, "save-result", "", "write tonight's result, with the corpus findings added, to `FILE` (later nights then count them)")
	failOn := fs.String("fail-on", "none", "exit 1 when tonight has unexpected findings (not on negative controls): none, new (new ones), any (new or still failing); with new or any, an interrupted campaign tonight exits 6; scan results: new or any exits 1 when a scan drifted or faulted")
	if err := parseInterspersed(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageErr("report: %w", err)
	}
	if o.paths = fs.Args(); len(o.paths) == 0 {
		fs.Usage()
		return usageErr("report: no result files given")
	}
	var err error
	if o.mode, err = verdict.ParseFailOn(*failOn); err != nil {
		return usageErr("report: %w", err)
	}
	if err := reports.CheckFormat(o.format); o.outDir == "" && err != nil {
		return usageErr("report: %w", err)
	}
	if err := checkOutputDir("out-dir", o.outDir); err != nil {
		return err
	}
	kind, err := reports.KindOfAll(o.paths)
	switch {
	case err != nil:
		return usageErr("report: %w", err)
	case kind == reports.KindScan && (o.corpusDir != "" || o.saveResult != ""):
		return usageErr("report: --corpus and --save-result are for campaign results, not scan results")
	case kind == reports.KindScan:
		return reportScans(stdout, o)
	}
	return reportCampaigns(stdout, stderr, o)
}

// reportCampaigns is `bitparity report` on campaign result files: tonight
// (the latest) with the corpus's open findings added (corpus.OpenFindings),
// saved when asked, reported against the earlier nights with the findings
// the corpus marks fixed (verdict.CorpusFindings), its exit judged by
// --fail-on (verdict.FailOn.Judge).
func reportCampaigns(stdout, stderr io.Writer, o reportOpts) error {
	srcs, err := reports.Load(o.paths...)
	if err != nil {
		return usageErr("report: %w", err)
	}
	tonight := reports.Tonight(srcs) // Load refuses no files
	var opts reports.Options
	if o.corpusDir != "" {
		found, fixed, err := verdict.CorpusFindings(context.Background(), o.corpusDir)
		if err != nil {
			return usageErr("report: %w", err)
		}
		tonight.Result.Findings, opts.Fixed = append(tonight.Result.Findings, found...), fixed
		fmt.Fprintf(stderr, "report: %d open finding(s) of corpus %s added to %s\n", len(found), o.corpusDir, tonight.Path)
	}
	if o.saveResult != "" {
		if err := atomicfile.WriteJSON(o.saveResult, tonight.Result); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	r, err := reports.BuildWith(srcs, time.Now(), opts)
	if err != nil {
		return usageErr("report: %w", err)
	}
	if err := r.Emit(stdout, o.format, o.outDir); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if o.corpusDir != "" && !corpus.IsURL(o.corpusDir) && (o.outDir != "" || o.format == "text") { // certificates live in folders
		if err := scan.ReportCertificates(stdout, o.corpusDir, o.outDir); err != nil { // scan.go
			return usageErr("report: %w", err)
		}
	}
	s := r.Summary
	if st, err := o.mode.Judge(s.Unexpected, s.NewUnexpected, s.Interrupted, tonight.Path); err != nil {
		return withCode(st.Code(), fmt.Errorf("report: %w", err))
	}
	return nil
}

// reportScans is `bitparity report` on scan results files (bitparity
// scan --json); with --fail-on new or any it exits 1 when a scan drifted
// or faulted.
func reportScans(stdout io.Writer, o reportOpts) error {
	srcs, err := reports.LoadScans(o.paths...)
	if err != nil {
		return usageErr("report: %w", err)
	}
	r := reports.BuildScans(srcs, time.Now())
	if err := r.Emit(stdout, o.format, o.outDir); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	s := r.Summary
	if bad := s.Drift + s.Fault; o.mode.Status(bad, bad, false) == verdict.Fail {
		return &exitError{code: spec.ExitFinding, err: fmt.Errorf("report: %d scan(s) drifted, %d faulted", s.Drift, s.Fault)}
	}
	return nil
}
