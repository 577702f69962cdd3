package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// scanResults collects what a scan command found, for --json: the scan
// results file (spec.ScanResults, docs/report-schema.md "Scan results").
type scanResults struct {
	path string // --json; "" writes nothing
	res  spec.ScanResults
}

// newScanResults starts the results of `bitparity scan ARGS...` in env.
func newScanResults(path string, env spec.Env, args []string) *scanResults {
	return &scanResults{path: path, res: spec.ScanResults{Format: spec.ScanResultsFormat, Version: spec.ScanResultsVersion,
		Started: time.Now().UTC(), Env: env, Args: append([]string{"scan"}, args...), Scans: []spec.ScanResult{}}}
}

// add appends one scan's result.
func (sr *scanResults) add(r spec.ScanResult) { sr.res.Scans = append(sr.res.Scans, r) }

// write writes the results to --json atomically, with the wall time
// since they started; nothing without --json.
func (sr *scanResults) write() error {
	if sr.path == "" {
		return nil
	}
	sr.res.Duration = spec.Duration(time.Since(sr.res.Started))
	b, err := json.MarshalIndent(&sr.res, "", "  ")
	if err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	if err := atomicfile.Write(sr.path, append(b, '\n')); err != nil {
		return withCode(spec.ExitUsage, fmt.Errorf("scan: --json: %w", err))
	}
	return nil
}

// storeScan keeps what scan r found in the corpus folder dir
// (corpus.StoreScan: its certificate, and a stored drift of the same scan
// marked fixed; or its drift or fault as a scan drift file that corpus
// recheck reruns); it prints where, and sets r's certificate_file or
// drift_file.
func storeScan(stdout io.Writer, dir string, r *spec.ScanResult, env spec.Env, kernel *spec.KernelManifest) error {
	d, err := corpus.OpenDir(dir, true)
	if err != nil {
		return withCode(spec.ExitUsage, err)
	}
	var adapter *spec.Adapter
	if t, err := target.Lookup(r.Scan.Target); err == nil {
		if et, ok := t.(*external.Target); ok {
			a := et.Adapter()
			adapter = &a
		}
	}
	kept, err := corpus.StoreScan(d, *r, env, kernel, adapter)
	if kept.Certificate != "" {
		r.CertificateFile = filepath.Join(dir, kept.Certificate)
		if r.Certificate.Status.State == spec.CertUnderpowered {
			fmt.Fprintf(stdout, "  CERTIFIED, UNDERPOWERED: 0 differ, but the draws reach less than the target power %.1f%%; certificate %s\n", 100*r.Certificate.Scan.Power, r.CertificateFile)
		} else {
			fmt.Fprintf(stdout, "  CERTIFIED: 0 differ; certificate %s\n", r.CertificateFile)
		}
	}
	if kept.Fixed != "" {
		fmt.Fprintf(stdout, "  fixed: the stored drift %s of this scan no longer shows\n", d.PathOf(kept.Fixed))
	}
	if kept.Drift != "" {
		r.DriftFile = filepath.Join(dir, kept.Drift)
		fmt.Fprintf(stdout, "  stored: %s (bitparity corpus recheck reruns it)\n", r.DriftFile)
	}
	if err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	return nil
}

// listScanDrifts writes two lines per scan drift of the local corpus
// folder: name, state, how many differ (or fault) and what it scans; then
// the drift map (or the fault).
func listScanDrifts(stdout, stderr io.Writer, d *corpus.Dir) {
	listEntries(stderr, "scan drifts", d.ScanDrifts, d.GetScanDrift, func(name string, r *spec.ScanDriftRecord) {
		what := fmt.Sprintf("%d differ", r.Found.Differing)
		if r.Found.Verdict == spec.ScanFault {
			what = "fault"
		}
		fmt.Fprintf(stdout, "%s  %-5s  %s  %s\n    %s\n", name, r.Status.State, what, reports.ScanWords(r.Scan), driftWhat(r.Found))
	})
}

// listEntries lists the entries of one kind of a corpus folder: print for
// each that reads, its error on stderr for each that does not, and the
// listing's own error (what names the kind) when the folder cannot be
// listed.
func listEntries[T any](stderr io.Writer, what string, names func() ([]string, error), get func(string) (T, error), print func(name string, v T)) {
	ns, err := names()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", what, err)
		return
	}
	for _, name := range ns {
		v, err := get(name)
		if err != nil {
			fmt.Fprintf(stderr, "%v\n", err)
			continue
		}
		print(name, v)
	}
}

// driftWhat says what a scan found in a few words: the map's rule or the
// fault.
func driftWhat(r spec.ScanResult) string {
	if r.Verdict == spec.ScanFault {
		return "fault: " + r.Fault
	}
	return "drift map: " + scan.MapWords(r.Map)
}

// recheckScanDrifts reruns the scan of every open scan drift in the local
// corpus folder (scan.Rerun, a user kernel's with the manifest kernels
// gives it) and writes each back: fixed when no row
// differed, else open. It returns how many are still open and how many
// could not run here.
func recheckScanDrifts(ctx context.Context, stdout io.Writer, d *corpus.Dir, env spec.Env, kernels *kernelRecheck) (open, broken int, err error) {
	fixed, checked := 0, 0
	rerun := func(r *spec.ScanDriftRecord) (spec.ScanResult, error) {
		opt, err := kernels.Options(r.Scan.Target, r.Kernel, "", "drift", env)
		if err != nil {
			return spec.ScanResult{}, err
		}
		return scan.Rerun(ctx, r.Scan, opt)
	}
	why := func(got spec.ScanResult) string { return got.Verdict + ": " + driftWhat(got) }
	err = corpus.RecheckScanDrifts(d, env, rerun, why, func(r corpus.DriftRecheck) {
		switch {
		case r.Was == nil:
			broken++
			fmt.Fprintf(stdout, "could not read %s: %v\n", r.Name, r.Err)
		case r.Err != nil:
			checked++
			broken++
			fmt.Fprintf(stdout, "could not run %s: %v\n", r.Name, r.Err)
			if a := r.Was.Adapter; a != nil && !slices.Contains(target.Names(), r.Was.Scan.Target) {
				fmt.Fprintf(stdout, "  %s is an adapter (%s on %s): pass --exec %s, the command line recorded with the drift; read it first, bitparity never runs a command from a file\n",
					r.Was.Scan.Target, a.Name, a.Device, spec.ShellQuote(a.Exec))
			}
		case r.Got.Status.State == corpus.StateFixed:
			checked++
			fixed++
			fmt.Fprintf(stdout, "scan drift fixed  %s (%s)\n", r.Name, reports.ScanWords(r.Was.Scan))
		default:
			checked++
			open++
			fmt.Fprintf(stdout, "scan drift OPEN   %s: %s\n", r.Name, driftWhat(r.Found))
		}
	})
	if err != nil {
		return open, broken, err
	}
	fmt.Fprintf(stdout, "rechecked %d scan drift(s): %d fixed, %d still drift, %d could not run\n", checked, fixed, open, broken)
	return open, broken, nil
}
