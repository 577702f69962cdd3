package scan

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// NewResults starts the results file of `bitparity scan ARGS...` in env
// (spec.ScanResults, docs/report-schema.md "Scan results").
func NewResults(env spec.Env, args []string) *spec.ScanResults {
	return &spec.ScanResults{Format: spec.ScanResultsFormat, Version: spec.ScanResultsVersion,
		Started: time.Now().UTC(), Env: env, Args: append([]string{"scan"}, args...), Scans: []spec.ScanResult{}}
}

// WriteResults writes res to path as indented JSON, atomically, with the
// wall time since it started.
func WriteResults(path string, res *spec.ScanResults) error {
	res.Duration = spec.Duration(time.Since(res.Started))
	return atomicfile.WriteJSON(path, res)
}

// Store keeps what scan r found in the corpus folder d
// (corpus.StoreScan: its certificate, and a stored drift of the same scan
// marked fixed; or its drift or fault as a scan drift file that corpus
// recheck reruns, with the adapter of an --exec target); it prints where
// to w and sets r's certificate_file or drift_file.
func Store(w io.Writer, d *corpus.Dir, r *spec.ScanResult, env spec.Env, kernel *spec.KernelManifest) error {
	var adapter *spec.Adapter
	if et, ok := external.Lookup(r.Scan.Target); ok {
		a := et.Adapter()
		adapter = &a
	}
	kept, err := corpus.StoreScan(d, *r, env, kernel, adapter)
	if kept.Certificate != "" {
		r.CertificateFile = d.PathOf(kept.Certificate)
		if r.Certificate.Status.State == spec.CertUnderpowered {
			fmt.Fprintf(w, "  CERTIFIED, UNDERPOWERED: 0 differ, but the draws reach less than the target power %.1f%%; certificate %s\n", 100*r.Certificate.Scan.Power, r.CertificateFile)
		} else {
			fmt.Fprintf(w, "  CERTIFIED: 0 differ; certificate %s\n", r.CertificateFile)
		}
	}
	if kept.Fixed != "" {
		fmt.Fprintf(w, "  fixed: the stored drift %s of this scan no longer shows\n", d.PathOf(kept.Fixed))
	}
	if kept.Drift != "" {
		r.DriftFile = d.PathOf(kept.Drift)
		fmt.Fprintf(w, "  stored: %s (bitparity corpus recheck reruns it)\n", r.DriftFile)
	}
	if err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	return nil
}

// RecheckCertificates reruns the scan of every valid certificate in the
// corpus folder d (Recheck, whatever its subject; a user kernel's with
// the manifest ks gives it), writes each back with its new status (valid,
// checked now, or invalid, with where, when and why) and prints a line
// for each and a total to w. It returns how many turned invalid and how
// many could not run here.
func RecheckCertificates(ctx context.Context, w io.Writer, d *corpus.Dir, env spec.Env, ks *Kernels) (invalid, broken int, err error) {
	valid, checked := 0, 0
	rerun := func(c *spec.Certificate) (spec.Certificate, error) {
		opt, err := ks.Options(c.Scan.Target, c.Kernel, c.KernelHash, "certificate", env)
		if err != nil {
			return *c, err
		}
		got, _, err := Recheck(ctx, *c, opt)
		return got, err
	}
	err = corpus.RecheckCertificates(d, rerun, func(r corpus.CertRecheck) {
		switch {
		case r.Was == nil:
			broken++
			fmt.Fprintf(w, "could not read %s: %v\n", r.Name, r.Err)
			return
		case r.Err != nil:
			checked++
			broken++
			couldNotRun(w, r.Name, r.Err, r.Was.Scan.Target, r.Was.Adapter, "certificate")
			return
		}
		checked++
		switch got := r.Got; got.Status.State {
		case spec.CertValid:
			valid++
			fmt.Fprintf(w, "certificate holds   %s (%s)\n", r.Name, reports.ScanWords(got.Scan))
		case spec.CertUnderpowered:
			valid++
			fmt.Fprintf(w, "certificate holds, UNDERPOWERED %s (%s): %s\n", r.Name, reports.ScanWords(got.Scan), got.Status.Reason)
		default:
			invalid++
			fmt.Fprintf(w, "certificate INVALID %s: %s\n", r.Name, got.Status.Reason)
		}
	})
	if err != nil {
		return invalid, broken, err
	}
	fmt.Fprintf(w, "rechecked %d certificate(s): %d hold, %d invalid, %d could not run\n", checked, valid, invalid, broken)
	return invalid, broken, nil
}

// RecheckAll is RecheckCertificates, then RecheckDrifts, on d: failing
// counts the certificates turned invalid and the drifts still open,
// broken the scans of either that could not run here.
func RecheckAll(ctx context.Context, w io.Writer, d *corpus.Dir, env spec.Env, ks *Kernels) (failing, broken int, err error) {
	invalid, cbroken, err := RecheckCertificates(ctx, w, d, env, ks)
	if err != nil {
		return 0, 0, err
	}
	open, dbroken, err := RecheckDrifts(ctx, w, d, env, ks)
	return invalid + open, cbroken + dbroken, err
}

// RecheckDrifts reruns the scan of every open scan drift in the corpus
// folder d (Rerun, a user kernel's with the manifest ks gives it), writes
// each back (fixed when no row differed, else open) and prints a line for
// each and a total to w. It returns how many are still open and how many
// could not run here.
func RecheckDrifts(ctx context.Context, w io.Writer, d *corpus.Dir, env spec.Env, ks *Kernels) (open, broken int, err error) {
	fixed, checked := 0, 0
	rerun := func(r *spec.ScanDriftRecord) (spec.ScanResult, error) {
		opt, err := ks.Options(r.Scan.Target, r.Kernel, "", "drift", env)
		if err != nil {
			return spec.ScanResult{}, err
		}
		return Rerun(ctx, r.Scan, opt)
	}
	why := func(got spec.ScanResult) string { return got.Verdict + ": " + DriftWords(got) }
	err = corpus.RecheckScanDrifts(d, env, rerun, why, func(r corpus.DriftRecheck) {
		switch {
		case r.Was == nil:
			broken++
			fmt.Fprintf(w, "could not read %s: %v\n", r.Name, r.Err)
		case r.Err != nil:
			checked++
			broken++
			couldNotRun(w, r.Name, r.Err, r.Was.Scan.Target, r.Was.Adapter, "drift")
		case r.Got.Status.State == corpus.StateFixed:
			checked++
			fixed++
			fmt.Fprintf(w, "scan drift fixed  %s (%s)\n", r.Name, reports.ScanWords(r.Was.Scan))
		default:
			checked++
			open++
			fmt.Fprintf(w, "scan drift OPEN   %s: %s\n", r.Name, DriftWords(r.Found))
		}
	})
	if err != nil {
		return open, broken, err
	}
	fmt.Fprintf(w, "rechecked %d scan drift(s): %d fixed, %d still drift, %d could not run\n", checked, fixed, open, broken)
	return open, broken, nil
}

// couldNotRun prints that the recheck of entry name (a certificate or
// drift: what) could not run, and for an adapter that no --exec started,
// the command line recorded with it, to read and pass (bitparity never
// runs a command from a file).
func couldNotRun(w io.Writer, name string, err error, tgt string, a *spec.Adapter, what string) {
	fmt.Fprintf(w, "could not run %s: %v\n", name, err)
	if a != nil && strings.HasPrefix(tgt, "exec:") && !slices.Contains(target.Names(), tgt) {
		fmt.Fprintf(w, "  %s is an adapter (%s on %s): pass --exec %s, the command line recorded with the %s; read it first, bitparity never runs a command from a file\n",
			tgt, a.Name, a.Device, spec.ShellQuote(a.Exec), what)
	}
}

// ListCertificates writes one line per certificate of the corpus folder
// d to w (name, state, what it covers), and to errw each that cannot be
// read.
func ListCertificates(w, errw io.Writer, d *corpus.Dir) {
	listEntries(errw, "certificates", d.Certificates, d.GetCertificate, func(name string, c *spec.Certificate) {
		fmt.Fprintf(w, "%s  %-7s  %d rows compared  %s\n", name, c.Status.State, c.RowsCompared, reports.ScanWords(c.Scan))
	})
}

// ListDrifts writes two lines per scan drift of the corpus folder d to w
// (name, state, how many differ or fault and what it scans; then
// DriftWords), and to errw each that cannot be read.
func ListDrifts(w, errw io.Writer, d *corpus.Dir) {
	listEntries(errw, "scan drifts", d.ScanDrifts, d.GetScanDrift, func(name string, r *spec.ScanDriftRecord) {
		what := fmt.Sprintf("%d differ", r.Found.Differing)
		if r.Found.Verdict == spec.ScanFault {
			what = "fault"
		}
		fmt.Fprintf(w, "%s  %-5s  %s  %s\n    %s\n", name, r.Status.State, what, reports.ScanWords(r.Scan), DriftWords(r.Found))
	})
}

// listEntries lists the entries of one kind of a corpus folder: print for
// each that reads, its error on errw for each that does not, and the
// listing's own error (what names the kind) when the folder cannot be
// listed.
func listEntries[T any](errw io.Writer, what string, names func() ([]string, error), get func(string) (T, error), print func(name string, v T)) {
	ns, err := names()
	if err != nil {
		fmt.Fprintf(errw, "%s: %v\n", what, err)
		return
	}
	for _, name := range ns {
		v, err := get(name)
		if err != nil {
			fmt.Fprintf(errw, "%v\n", err)
			continue
		}
		print(name, v)
	}
}

// DriftWords says what a scan found in a few words: "drift map: " and the
// map's rule (MapWords), or "fault: " and the fault.
func DriftWords(r spec.ScanResult) string {
	if r.Verdict == spec.ScanFault {
		return "fault: " + r.Fault
	}
	return "drift map: " + MapWords(r.Map)
}

// ShowCertificate prints the certificate arg names (a cert-*.json file
// name in dir, or a path to one) and reports whether arg named one.
func ShowCertificate(w io.Writer, dir, arg string, asJSON bool) (bool, error) {
	base := filepath.Base(arg)
	if !corpus.IsCertName(base) && !corpus.IsCertName(base+".json") {
		return false, nil
	}
	path := arg
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join(dir, strings.TrimSuffix(base, ".json")+".json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return true, fmt.Errorf("corpus show: %w", err)
	}
	c, err := corpus.DecodeCertificate(path, data)
	if err != nil {
		return true, err
	}
	if asJSON {
		b, err := corpus.EncodeCertificate(c)
		if err == nil {
			_, err = w.Write(b)
		}
		return true, err
	}
	reports.CertificateText(w, filepath.Base(path), c)
	return true, nil
}

// ReportCertificates writes the certificates of corpus folder dir in
// words: to w after a text report, or to certificates.txt in outDir
// (whose path it prints).
func ReportCertificates(w io.Writer, dir, outDir string) error {
	d, err := corpus.OpenDir(dir, false)
	if err != nil {
		return err
	}
	names, err := d.Certificates()
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d scan certificate(s) in %s\n", len(names), dir)
	for _, name := range names {
		c, err := d.GetCertificate(name)
		if err != nil {
			return err
		}
		reports.CertificateText(&b, name, c)
	}
	if outDir == "" {
		_, err := io.WriteString(w, b.String())
		return err
	}
	path := filepath.Join(outDir, "certificates.txt")
	if err := atomicfile.Write(path, []byte(strings.TrimPrefix(b.String(), "\n"))); err != nil {
		return err
	}
	fmt.Fprintln(w, path)
	return nil
}
