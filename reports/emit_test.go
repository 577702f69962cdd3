package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFormat: every format of Formats is known, another is not and
// the error names them.
func TestCheckFormat(t *testing.T) {
	for _, f := range FormatNames() {
		if err := CheckFormat(f); err != nil {
			t.Errorf("CheckFormat(%q): %v", f, err)
		}
	}
	if err := CheckFormat("pdf"); err == nil || !strings.Contains(err.Error(), "text, json, junit, markdown, html") {
		t.Errorf("CheckFormat(pdf): %v", err)
	}
}

// TestKindOfAll: campaign results, scan results, and a mix (an error
// naming both).
func TestKindOfAll(t *testing.T) {
	night, scan := filepath.Join("testdata", "night1.json"), scanFixture
	for _, tc := range []struct {
		paths []string
		want  string
		err   string
	}{
		{[]string{night, filepath.Join("testdata", "night2.json")}, KindCampaign, ""},
		{[]string{scan}, KindScan, ""},
		{[]string{scan, night}, "", scan + " are scan results and " + night + " campaign results"},
		{[]string{filepath.Join("testdata", "none.json")}, "", "none.json"},
	} {
		got, err := KindOfAll(tc.paths)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("KindOfAll(%q) = %q, %v; want %q, error with %q", tc.paths, got, err, tc.want, tc.err)
		}
	}
}

// TestEmit: on the writer in one format, or every format into a folder
// with the files listed; WriteFiles writes the same files.
func TestEmit(t *testing.T) {
	r := build(t, filepath.Join("testdata", "night1.json"))
	var b bytes.Buffer
	if err := r.Emit(&b, "markdown", ""); err != nil || !strings.HasPrefix(b.String(), "#") {
		t.Errorf("Emit(markdown) = %q, %v", b.String(), err)
	}
	b.Reset()
	dir := t.TempDir()
	if err := r.Emit(&b, "text", dir); err != nil {
		t.Fatal(err)
	}
	listed := strings.Fields(b.String())
	if len(listed) != len(Formats) {
		t.Fatalf("Emit into %s listed %q, want %d files", dir, listed, len(Formats))
	}
	for i, f := range Formats {
		if listed[i] != filepath.Join(dir, f.File) {
			t.Errorf("listed %s, want %s", listed[i], filepath.Join(dir, f.File))
		}
	}
	s := buildScans(t)
	b.Reset()
	if err := s.Emit(&b, "text", t.TempDir()); err != nil || len(strings.Fields(b.String())) != len(Formats) {
		t.Errorf("scan Emit listed %q, %v", b.String(), err)
	}
	dir2 := t.TempDir()
	if err := WriteFiles(dir2, filepath.Join("testdata", "night1.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir2, "report.html")); err != nil {
		t.Errorf("WriteFiles: %v", err)
	}
}
