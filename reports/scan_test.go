package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/internal/golden"
)

// scanFixture holds a drift, a certificate and a fault
// (testdata/scan-results.json, in the schema scan --json writes).
const scanFixture = "testdata/scan-results.json"

func buildScans(t *testing.T) *ScanReport {
	t.Helper()
	srcs, err := LoadScans(scanFixture)
	if err != nil {
		t.Fatal(err)
	}
	return BuildScans(srcs, generated)
}

// TestScanGolden compares every text format of the scan report with
// testdata/scan-report.<ext>; go test ./reports -run TestScanGolden
// -update rewrites them.
func TestScanGolden(t *testing.T) {
	r := buildScans(t)
	if s := r.Summary; s.Scans != 3 || s.Drift != 1 || s.Certified != 1 || s.Fault != 1 || !r.Failing() {
		t.Fatalf("summary %+v", s)
	}
	for _, f := range goldenFormats {
		t.Run(f.format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteScans(&buf, r, f.format); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "scan-report."+f.ext), buf.Bytes(), *update)
		})
	}
}

// TestScanHTML: the page is self-contained and draws the drift's map
// with the campaign report's plot.
func TestScanHTML(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteScans(&buf, buildScans(t), "html"); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"data:image/png;base64,", "rows &lt;= 31 -&gt; A, rows == 32 -&gt; B", "an illegal memory access", "v-certified"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Error("page is not self-contained")
	}
}

func TestKind(t *testing.T) {
	for _, tt := range []struct {
		data, want, err string
	}{
		{`{"format": "bitparity-scan-results", "version": 1}`, KindScan, ""},
		{`{"version": 1, "started": "2026-12-01T02:00:00Z"}`, KindCampaign, ""},
		{` [{"Spec": {}}]`, "", "scan again with this build"},
		{`nope`, "", "invalid character"},
	} {
		got, err := Kind([]byte(tt.data))
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("Kind(%s) = %q, %v; want %q, %q", tt.data, got, err, tt.want, tt.err)
		}
	}
}

func TestLoadScansRejects(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"newer":   `{"format": "bitparity-scan-results", "version": 2, "scans": []}`,
		"verdict": `{"format": "bitparity-scan-results", "version": 1, "scans": [{"scan": {}, "verdict": "maybe"}]}`,
		"format":  `{"format": "bitparity-certificate", "version": 1}`,
	} {
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadScans(p); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if _, err := LoadScans(scanFixture); err != nil {
		t.Errorf("fixture: %v", err)
	}
}
