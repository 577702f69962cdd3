package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/spec"
)

var reportFixtures = []string{"../../reports/testdata/night1.json", "../../reports/testdata/night2.json"}

func runReportArgs(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	err := run(&o, &e, append([]string{"report"}, args...))
	return o.String(), e.String(), exitCode(err)
}

func TestReportCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stdout
	}{
		{"text", reportFixtures, spec.ExitOK, "unexpected: 2 (2 new)"},
		{"markdown", append([]string{"--format", "markdown"}, reportFixtures...), spec.ExitOK, "## bitparity: 2 unexpected (2 new)"},
		{"fail on new", append([]string{"--fail-on", "new"}, reportFixtures...), spec.ExitFinding, "bitparity report"},
		{"fail on any, one night of controls", []string{"--fail-on", "any", reportFixtures[0]}, spec.ExitOK, "unexpected: 0 (0 new)"},
		{"bad format", append([]string{"--format", "pdf"}, reportFixtures...), spec.ExitUsage, ""},
		{"bad fail-on", append([]string{"--fail-on", "some"}, reportFixtures...), spec.ExitUsage, ""},
		{"no files", nil, spec.ExitUsage, ""},
		{"missing file", []string{"nope.json"}, spec.ExitUsage, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runReportArgs(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, errOut)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("stdout lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

func TestReportJUnitOnStdout(t *testing.T) {
	out, errOut, code := runReportArgs(t, append([]string{"--format", "junit"}, reportFixtures...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Tests int `xml:"tests,attr"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil || doc.Tests != 15 {
		t.Fatalf("junit: %v, %d tests (want 15)", err, doc.Tests)
	}
}

// reportCorpus makes the corpus folder cdir and returns it with the
// fixture's second night and a finding of it on another seed, to store.
func reportCorpus(t *testing.T, cdir string) (*corpus.Dir, []reports.Source, spec.Finding) {
	t.Helper()
	d, err := corpus.OpenDir(cdir, true)
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := reports.Load(reportFixtures[1])
	if err != nil {
		t.Fatal(err)
	}
	fd := srcs[0].Result.Findings[3]
	fd.Case.Seed = 4242
	return d, srcs, fd
}

// --corpus adds the open findings of a corpus to tonight, --save-result
// keeps them for later nights, --out-dir writes every format.
func TestReportCorpusAndSave(t *testing.T) {
	dir := t.TempDir()
	cdir := filepath.Join(dir, "corpus")
	d, srcs, fd := reportCorpus(t, cdir)
	// A go fuzz failure on an invariant target, open in the corpus.
	fd.Relation, fd.Case.Relation = spec.RelDeterminism, spec.RelDeterminism
	fd.Case.Rel = spec.RelParams{Row: fd.Case.Rel.Row} // pad and filler belong to padding
	fd.Signature, fd.Repro = "", ""
	fd.Signature = spec.Signature(fd)
	if _, _, err := d.Put(corpus.NewFile(fd.Case, &fd, fd.Env, "gofuzz:FuzzRMSNormDeterminism")); err != nil {
		t.Fatal(err)
	}
	// And a fixed one, which must not be added.
	fixed := fd
	fixed.Relation, fixed.Case.Relation = spec.RelOracleParity, spec.RelOracleParity
	fixed.Signature = spec.Signature(fixed)
	ff := corpus.NewFile(fixed.Case, &fixed, fixed.Env, "gofuzz:FuzzRMSNormOracleParity")
	ff.Status.State = corpus.StateFixed
	ff.Status.FixedAt = srcs[0].Result.Started
	if _, _, err := d.Put(ff); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "night")
	saved := filepath.Join(dir, "result.json")
	args := append([]string{"--out-dir", out, "--corpus", cdir, "--save-result", saved, "--fail-on", "new"}, reportFixtures...)
	stdout, stderr, code := runReportArgs(t, args...)
	if code != spec.ExitFinding {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "1 open finding(s) of corpus") {
		t.Errorf("stderr: %s", stderr)
	}
	for _, f := range reports.Formats {
		if !strings.Contains(stdout, filepath.Join(out, f.File)) {
			t.Errorf("stdout does not list %s:\n%s", f.File, stdout)
		}
	}
	r := readJSON[reports.Report](t, filepath.Join(out, "report.json"))
	found := false
	for _, e := range r.Findings {
		if e.Signature == fd.Signature {
			found = true
			if e.Status != reports.StatusNew || e.Expected || !strings.HasPrefix(e.Finding.Repro, "bitparity repro "+cdir) {
				t.Errorf("corpus finding: status %s expected %v repro %q", e.Status, e.Expected, e.Finding.Repro)
			}
		}
		if e.Signature == fixed.Signature {
			t.Error("a fixed corpus finding was added")
		}
	}
	if !found || r.Summary.NewUnexpected != 3 {
		t.Errorf("corpus finding found=%v, new unexpected %d (want 3)", found, r.Summary.NewUnexpected)
	}
	saved2, err := reports.Load(saved)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(saved2[0].Result.Findings); n != 5 {
		t.Errorf("saved result has %d findings, want the 4 of the night plus 1 from the corpus", n)
	}
}

// TestReportCorpusBucket: --corpus takes a bucket URL as it takes a
// folder: its open findings are added and its fixed ones read from it
// (certificates are listed from folders only).
func TestReportCorpusBucket(t *testing.T) {
	cdir := filepath.Join(t.TempDir(), "corpus")
	d, _, fd := reportCorpus(t, cdir)
	fd.Signature = spec.Signature(fd)
	if _, _, err := d.Put(corpus.NewFile(fd.Case, &fd, fd.Env, "test")); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--format", "json", "--corpus", "file://" + cdir}, reportFixtures...)
	stdout, stderr, code := runReportArgs(t, args...)
	if code != spec.ExitOK || !strings.Contains(stderr, "1 open finding(s) of corpus file://"+cdir) {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	var r reports.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range r.Findings {
		found = found || e.Signature == fd.Signature
	}
	if !found {
		t.Errorf("the bucket's open finding is not in the report")
	}
	// text lists a folder's certificates; a bucket has none
	if _, stderr, code := runReportArgs(t, append([]string{"--corpus", "file://" + cdir}, reportFixtures...)...); code != spec.ExitOK {
		t.Errorf("text: exit %d, want 0; stderr:\n%s", code, stderr)
	}
}
