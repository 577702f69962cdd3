package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
)

// driftScan is a scan of a drift model that finds rows == 32 -> B.
var driftScan = []string{"scan", "--target", "drift-rmsnorm-te-mod32", "--to", "40", "--hidden", "64"}

// TestScanJSONGolden: scan --json writes the scan results schema
// (docs/report-schema.md, "Scan results"): snake_case, a format and
// version, durations in seconds; the fields that vary from run to run
// (times, the environment, paths) are set to fixed values before the
// compare with testdata/scan-results.json (-update rewrites it).
func TestScanJSONGolden(t *testing.T) {
	dir, jsonPath := t.TempDir(), filepath.Join(t.TempDir(), "scan.json")
	out, errs, code := bp(t, append(driftScan, "--dir", dir, "--json", jsonPath)...)
	if code != spec.ExitFinding {
		t.Fatalf("exit %d, want %d\n%s%s", code, spec.ExitFinding, out, errs)
	}
	res := readJSON[spec.ScanResults](t, jsonPath)
	if len(res.Scans) != 1 || res.Scans[0].Elapsed <= 0 || res.Duration < res.Scans[0].Elapsed {
		t.Fatalf("scans %d, duration %v, elapsed %v", len(res.Scans), res.Duration, res.Scans[0].Elapsed)
	}
	res.Started, res.Duration, res.Env = time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC), 0, spec.Env{Bitparity: "test"}
	res.Scans[0].Elapsed = 0
	got, err := json.MarshalIndent(&res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = []byte(strings.NewReplacer(dir, "CORPUS", jsonPath, "SCAN.json").Replace(string(got)) + "\n")
	golden := filepath.Join("testdata", "scan-results.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/bitparity -run TestScanJSONGolden -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("scan --json differs from %s (-update rewrites it):\n%s", golden, got)
	}
}

// TestReportScanResults: report reads scan --json (on main it exits 2:
// the file is a list) in every format, and --fail-on any exits 1 on its
// drift.
func TestReportScanResults(t *testing.T) {
	jsonPath := filepath.Join(t.TempDir(), "scan.json")
	if _, errs, code := bp(t, append(driftScan, "--dir", t.TempDir(), "--json", jsonPath)...); code != spec.ExitFinding {
		t.Fatalf("scan: exit %d\n%s", code, errs)
	}
	out, errs, code := bp(t, "report", jsonPath)
	if code != spec.ExitOK || !strings.Contains(out, "DRIFT      drift-rmsnorm-te-mod32 rmsnorm, items 1..40") ||
		!strings.Contains(out, "rows <= 31 -> A, rows == 32 -> B, rows >= 33 -> A") {
		t.Fatalf("report: exit %d\n%s%s", code, out, errs)
	}
	if _, _, code := bp(t, "report", "--fail-on", "any", jsonPath); code != spec.ExitFinding {
		t.Errorf("--fail-on any: exit %d, want %d", code, spec.ExitFinding)
	}
	outDir := t.TempDir()
	if out, errs, code := bp(t, "report", "--out-dir", outDir, jsonPath); code != spec.ExitOK || strings.Count(out, outDir) != 5 {
		t.Fatalf("--out-dir: exit %d\n%s%s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(outDir, "report.html")); err != nil || !strings.Contains(string(b), "data:image/png;base64,") {
		t.Errorf("report.html: %v, no drift map drawn", err)
	}

	// a scan results file beside a campaign result, or the list of older
	// builds, is refused
	list := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(list, []byte(`[{"Spec": {}}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"report", list}, "scan again with this build"},
		{[]string{"report", jsonPath, "../../reports/testdata/night1.json"}, "one kind at a time"},
	} {
		var out, errb bytes.Buffer
		err := run(&out, &errb, tt.args)
		if exitCode(err) != spec.ExitUsage || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: exit %d, %v, want %q", tt.args, exitCode(err), err, tt.want)
		}
	}
}

// TestScanDriftInCorpus: a scan's drift is stored in the corpus folder,
// corpus ls lists it, corpus recheck reruns it (still open: exit 1); a
// drift whose scan now certifies is marked fixed by the recheck (exit 0),
// and by a scan of the same spec.
func TestScanDriftInCorpus(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := bp(t, append(driftScan, "--dir", dir)...)
	if code != spec.ExitFinding || !strings.Contains(out, "stored: "+dir) {
		t.Fatalf("scan: exit %d\n%s%s", code, out, errs)
	}
	d, drift := onlyEntry(t, dir, (*corpus.Dir).ScanDrifts)
	if out, _, code := bp(t, "corpus", "ls", "-dir", dir); code != 0 || !strings.Contains(out, drift+"  open   27 differ  drift-rmsnorm-te-mod32") {
		t.Errorf("corpus ls: exit %d\n%s", code, out)
	}
	if out, _, code := bp(t, "corpus", "recheck", "-dir", dir); code != spec.ExitFinding || !strings.Contains(out, "scan drift OPEN   "+drift) ||
		!strings.Contains(out, "1 scan drift(s): 0 fixed, 1 still drift") {
		t.Errorf("corpus recheck of a drift: exit %d\n%s", code, out)
	}

	// the same scan of a target that no longer drifts (as if fixed since)
	rec, err := d.GetScanDrift(drift)
	if err != nil {
		t.Fatal(err)
	}
	fixedDir := t.TempDir()
	fd, err := corpus.OpenDir(fixedDir, false)
	if err != nil {
		t.Fatal(err)
	}
	rec.Scan.Target, rec.Found.Scan.Target = "oracle-rmsnorm", "oracle-rmsnorm"
	name, err := fd.PutScanDrift(rec)
	if err != nil {
		t.Fatal(err)
	}
	if out, _, code := bp(t, "corpus", "recheck", "-dir", fixedDir); code != spec.ExitOK || !strings.Contains(out, "scan drift fixed  "+name) {
		t.Errorf("corpus recheck of a fixed drift: exit %d\n%s", code, out)
	}
	if got, err := fd.GetScanDrift(name); err != nil || got.Status.State != corpus.StateFixed || got.Status.FixedEnv == nil {
		t.Errorf("after recheck: %+v %v", got.Status, err)
	}
	if out, _, _ := bp(t, "corpus", "ls", "-dir", fixedDir); !strings.Contains(out, name+"  fixed") {
		t.Errorf("corpus ls after the fix:\n%s", out)
	}

	// a scan that certifies marks the open drift of its spec fixed
	rescan := t.TempDir()
	rs, _ := corpus.OpenDir(rescan, false)
	rec.Status = spec.ScanDriftStatus{State: corpus.StateOpen}
	if _, err := rs.PutScanDrift(rec); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := bp(t, "scan", "--target", "oracle-rmsnorm", "--to", "40", "--hidden", "64", "--dir", rescan); code != spec.ExitOK || !strings.Contains(out, "fixed: the stored drift") {
		t.Errorf("rescan: exit %d\n%s%s", code, out, errs)
	}
}
