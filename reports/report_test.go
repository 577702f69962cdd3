package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/internal/golden"
	"github.com/bitparity/bitparity/spec"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ (and the browser screenshot)")

// generated is the fixed report time of the golden files.
var generated = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

// goldenFormats are the text formats a golden test writes, each with the
// ending of its file under testdata/.
var goldenFormats = []struct{ format, ext string }{
	{"text", "txt"}, {"json", "json"}, {"junit", "xml"}, {"markdown", "md"},
}

const (
	night1 = "testdata/night1.json"
	night2 = "testdata/night2.json"
)

// written is r written in format.
func written(t *testing.T, r *Report, format string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, format); err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return buf.String()
}

func build(t *testing.T, paths ...string) *Report {
	t.Helper()
	srcs, err := Load(paths...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(srcs, generated)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGolden compares every text format with testdata/<name>.<ext>;
// go test ./reports -update rewrites them.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paths []string
	}{
		{"two-nights", []string{night2, night1}}, // out of order on purpose: Build sorts by start
		{"one-night", []string{night2}},
	} {
		r := build(t, tc.paths...)
		for _, f := range goldenFormats {
			t.Run(tc.name+"/"+f.format, func(t *testing.T) {
				golden.Check(t, filepath.Join("testdata", tc.name+"."+f.ext), []byte(written(t, r, f.format)), *update)
			})
		}
	}
}

func TestStatusAcrossNights(t *testing.T) {
	r := build(t, night1, night2)
	got := map[string]string{}
	first := map[string]time.Time{}
	for _, e := range r.Findings {
		got[e.Finding.TargetA] = e.Status
		first[e.Finding.TargetA] = e.FirstSeen
	}
	want := map[string]string{
		"drift-rmsnorm-rows32":   StatusStillFailing,
		"drift-decode-tile48":    StatusNew,
		"user-ptx:rmsnorm_fused": StatusNew,
		"drift-gemm-splitk":      StatusNotSeen, // gone tonight, but no recheck passed
		"cuda-rmsnorm":           StatusNew,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	if n1 := r.Inputs[0].Started; !first["drift-rmsnorm-rows32"].Equal(n1) {
		t.Errorf("rmsnorm first seen %v, want the first night %v", first["drift-rmsnorm-rows32"], n1)
	}
	s := r.Summary
	if s.New != 3 || s.StillFailing != 1 || s.Fixed != 0 || s.NotSeen != 1 || s.NotRerun != 0 || s.Findings != 4 ||
		s.Expected != 2 || s.Unexpected != 2 || s.NewUnexpected != 2 {
		t.Errorf("summary %+v", s)
	}
	wantTrend := [][4]int{{2, 0, 0, 0}, {3, 1, 0, 1}}
	for i, n := range r.Trend {
		if g := [4]int{n.New, n.StillFailing, n.Fixed, n.NotSeen}; g != wantTrend[i] {
			t.Errorf("trend night %d: new/still/fixed/not seen %v, want %v", i, g, wantTrend[i])
		}
	}
}

// A finding that vanished because tonight did not run its target is not
// fixed.
func TestNotRerun(t *testing.T) {
	srcs, err := Load(night1, night2)
	if err != nil {
		t.Fatal(err)
	}
	var kept []spec.TargetStats
	for _, st := range srcs[1].Result.Targets {
		if st.Target != "drift-gemm-splitk" {
			kept = append(kept, st)
		}
	}
	srcs[1].Result.Targets = kept
	r, err := Build(srcs, generated)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Findings {
		if e.Finding.TargetA == "drift-gemm-splitk" && e.Status != StatusNotRerun {
			t.Errorf("gemm finding status %q, want %q", e.Status, StatusNotRerun)
		}
	}
	if r.Summary.Fixed != 0 || r.Summary.NotRerun != 1 || r.Trend[1].Fixed != 0 {
		t.Errorf("summary %+v, trend %+v", r.Summary, r.Trend[1])
	}
}

// checkCells fails the test for every cell of want, keyed
// op/relation/target, whose status in r is another.
func checkCells(t *testing.T, r *Report, want map[string]string) {
	t.Helper()
	status := map[string]string{}
	for _, c := range r.Cells {
		status[string(c.Op)+"/"+c.Relation+"/"+c.Target] = c.Status
	}
	for key, w := range want {
		if got := status[key]; got != w {
			t.Errorf("cell %s: %q, want %q", key, got, w)
		}
	}
}

func TestCells(t *testing.T) {
	r := build(t, night1, night2)
	checkCells(t, r, map[string]string{
		"rmsnorm/batch_invariance/oracle-rmsnorm":         CellPass,
		"rmsnorm/determinism/oracle-rmsnorm":              CellPass,
		"rmsnorm/oracle_parity/oracle-rmsnorm":            CellPass,
		"rmsnorm/padding/oracle-rmsnorm":                  CellPass,
		"rmsnorm/batch_invariance/drift-rmsnorm-rows32":   CellExpected,
		"rmsnorm/padding/cuda-rmsnorm":                    CellFail,
		"gemm/batch_invariance/cublas-gemm":               CellNotRun,
		"rmsnorm/padding/drift-rmsnorm-rows32":            CellPass,
		"rmsnorm/batch_invariance/user-ptx:rmsnorm_fused": CellCrash,
		"attn_decode/path_parity/drift-decode-tile48":     CellExpected,
		"gemm/batch_invariance/drift-gemm-splitk":         CellPass,
	})
	if len(r.Cells) != 15 || r.Summary.CellsFailing != 2 {
		t.Errorf("%d cells, %d failing; want 15, 2", len(r.Cells), r.Summary.CellsFailing)
	}
}

// Without Op/Relations in TargetStats (older result files), cells come
// from the findings, and a clean target still gets one cell.
func TestCellsWithoutRelations(t *testing.T) {
	srcs, err := Load(night2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range srcs[0].Result.Targets {
		srcs[0].Result.Targets[i].Op = ""
		srcs[0].Result.Targets[i].Relations = nil
	}
	r, err := Build(srcs, generated)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.Cells {
		got = append(got, string(c.Op)+"/"+c.Relation+"/"+c.Target+"="+c.Status)
	}
	want := []string{
		"/all/cublas-gemm=not_run",
		"/all/drift-gemm-splitk=pass",
		"/all/oracle-rmsnorm=pass",
		"attn_decode/path_parity/drift-decode-tile48=expected",
		"rmsnorm/batch_invariance/drift-rmsnorm-rows32=expected",
		"rmsnorm/batch_invariance/user-ptx:rmsnorm_fused=crash",
		"rmsnorm/padding/cuda-rmsnorm=fail",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("cells (-want +got):\n%s", d)
	}
}

// The JUnit file parses with encoding/xml, has one test case per cell, and
// its failures carry the repro command and the finding in words.
func TestJUnitParses(t *testing.T) {
	r := build(t, night1, night2)
	junit := written(t, r, "junit")
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Type string `xml:"type,attr"`
					Text string `xml:",chardata"`
				} `xml:"error"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(junit), &doc); err != nil {
		t.Fatalf("junit does not parse: %v\n%s", err, junit)
	}
	cases, failures, errs, controls := 0, 0, 0, 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			cases++
			if strings.Contains(c.SystemOut, "expected (negative control)") && c.Failure == nil && c.Error == nil {
				controls++
			}
			if c.Failure != nil {
				failures++
				if !strings.Contains(c.Failure.Text, "repro: bitparity repro corpus/cases/") {
					t.Errorf("%s/%s: failure without repro:\n%s", s.Name, c.Name, c.Failure.Text)
				}
				if !strings.Contains(c.Failure.Text, "rmsnorm padding on cuda-rmsnorm: row 1 col 0: 0x8000 (-0) vs 0x0000 (0)") {
					t.Errorf("%s/%s: failure without the finding in words:\n%s", s.Name, c.Name, c.Failure.Text)
				}
			}
			if c.Error != nil {
				errs++
				if c.Error.Type != "crash" || !strings.Contains(c.Error.Text, "CUDA_ERROR_ILLEGAL_ADDRESS") ||
					!strings.Contains(c.Error.Text, "<rmsnorm_fused+0x1a0>") {
					t.Errorf("%s/%s: crash error %q", s.Name, c.Name, c.Error.Text)
				}
			}
		}
	}
	if cases != len(r.Cells) || doc.Tests != cases {
		t.Errorf("%d test cases (tests=%d), want one per cell: %d", cases, doc.Tests, len(r.Cells))
	}
	if failures != 1 || errs != 1 || doc.Failures != 1 || doc.Errors != 1 {
		t.Errorf("failures %d (attr %d), errors %d (attr %d); want 1 and 1", failures, doc.Failures, errs, doc.Errors)
	}
	if controls != 2 {
		t.Errorf("%d passing cases name a negative control in system-out, want 2", controls)
	}
}

// The JSON report round-trips and carries its schema version.
func TestJSONReport(t *testing.T) {
	r := build(t, night1, night2)
	var back Report
	if err := json.Unmarshal([]byte(written(t, r, "json")), &back); err != nil {
		t.Fatal(err)
	}
	if back.Version != Version || len(back.Findings) != 5 || len(back.Inputs) != 2 {
		t.Errorf("round trip: version %d, %d findings, %d inputs", back.Version, len(back.Findings), len(back.Inputs))
	}
	if d := cmp.Diff(r.Summary, back.Summary); d != "" {
		t.Errorf("summary after round trip (-want +got):\n%s", d)
	}
}

// Text from result files cannot break out of Markdown tables or inject HTML.
func TestMarkdownEscapes(t *testing.T) {
	r := build(t, night2)
	md := written(t, r, "markdown")
	if strings.Contains(md, "<rmsnorm_fused") {
		t.Error("raw '<' from an error message reached the Markdown")
	}
	rows := 0
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "| 🔴 new | no | `rmsnorm` | `batch_invariance`") {
			continue
		}
		rows++
		// 9 unescaped pipes make 8 cells.
		if n := strings.Count(line, "|") - strings.Count(line, `\|`); n != 9 {
			t.Errorf("table row has %d unescaped pipes, want 9: %s", n, line)
		}
	}
	if rows != 1 {
		t.Errorf("found %d table rows of the crash finding, want 1", rows)
	}
	for _, tc := range []struct{ in, want string }{
		{"a|b", "`a\\|b`"},
		{"x`y", "``x`y``"},
		{"`x", "`` `x ``"},
		{"", ""},
	} {
		if got := mdCode(tc.in); got != tc.want {
			t.Errorf("mdCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestHTMLSelfContained(t *testing.T) {
	r := build(t, night1, night2)
	page := written(t, r, "html")
	for _, bad := range []string{"http://", "https://", "<script", "<rmsnorm_fused", "//cdn"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if !strings.Contains(page, "&lt;rmsnorm_fused") {
		t.Error("crash error not escaped as text")
	}
	// trend + ulp histogram + (drift map + heatmap) x 3 findings with
	// both (the crash has neither; the signed-zero finding differs in one
	// column only, which its words say: no heatmap).
	if n := strings.Count(page, `src="data:image/png;base64,`); n != 8 {
		t.Errorf("%d inline PNG plots, want 8", n)
	}
}

func TestWriteDir(t *testing.T) {
	r := build(t, night1, night2)
	dir := filepath.Join(t.TempDir(), "nightly", "2026-12-01")
	paths, err := WriteDir(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(Formats) {
		t.Fatalf("wrote %v", paths)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if info, _ := e.Info(); info.Size() == 0 {
			t.Errorf("%s is empty", e.Name())
		}
	}
	want := []string{"junit.xml", "report.html", "report.json", "report.txt", "summary.md"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("files (-want +got), no temporary files may stay:\n%s", d)
	}
}

func TestLoadRejects(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"newer.json", `{"version": 99, "started": "2026-12-01T02:00:00Z"}`, "version 99"},
		{"case.json", `{"version": 1, "op": "rmsnorm", "relation": "padding"}`, "not a result file"},
		{"broken.json", `{"version": `, "unexpected end"},
	} {
		_, err := Load(write(tc.name, tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := Build(nil, generated); err == nil {
		t.Error("Build of no sources: no error")
	}
	if err := Write(&bytes.Buffer{}, &Report{}, "pdf"); err == nil {
		t.Error("unknown format: no error")
	}
}

func TestULPBucket(t *testing.T) {
	for _, tc := range []struct {
		u     uint64
		k     int
		label string
	}{
		{0, 0, "0"}, {1, 1, "1"}, {2, 2, "2"}, {3, 3, "3-4"}, {4, 3, "3-4"},
		{5, 4, "5-8"}, {8, 4, "5-8"}, {9, 5, "9-16"}, {1 << 20, 21, "≤2^20"}, {1<<63 + 1, 65, ">2^63"},
	} {
		k := ulpBucket(tc.u)
		if k != tc.k || ulpBucketLabel(k) != tc.label {
			t.Errorf("ulpBucket(%d) = %d %q, want %d %q", tc.u, k, ulpBucketLabel(k), tc.k, tc.label)
		}
	}
}

// The heatmap and drift plot accept edge cases without panicking: one
// class, a row without a column sample, a single differing column.
func TestPlotsEdgeCases(t *testing.T) {
	d := &spec.DriftMap{Dim: "rows", Values: []int{7}, Classes: []spec.DriftClass{{Values: []int{7}}}}
	p, err := driftPlot(d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pngDataURI(p, plotW, plotH); err != nil {
		t.Fatal(err)
	}
	if h, err := heatmap([]spec.RowMismatch{{Row: 5, Count: 1, FirstCol: 0, MaxULPs: 1}}); err != nil || h != nil {
		t.Fatalf("heatmap of one differing column: %v %v, want none (the words say it)", h, err)
	}
	h, err := heatmap([]spec.RowMismatch{{Row: 5, Count: 1, FirstCol: 0, MaxULPs: 1}, {Row: 9, Count: 1, FirstCol: 3, MaxULPs: 2}})
	if err != nil || h == nil {
		t.Fatalf("heatmap: %v %v", h, err)
	}
	if !strings.Contains(h.Title.Text, "each mark: one differing column") {
		t.Errorf("heatmap of single columns titled %q, want no colour scale", h.Title.Text)
	}
	if _, err := pngDataURI(h, plotW, heatH); err != nil {
		t.Fatal(err)
	}
	if _, err := driftPlot(&spec.DriftMap{Dim: "kv"}); err == nil {
		t.Error("drift map without classes: no error")
	}
}

// TestTonight: tonight is the latest source by start time, ties to the
// greater path, the one BuildWith reports as tonight.
func TestTonight(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 12, 1, h, 0, 0, 0, time.UTC) }
	srcs := []Source{
		{Path: "b.json", Result: spec.Result{Started: at(3)}},
		{Path: "c.json", Result: spec.Result{Started: at(2)}},
		{Path: "a.json", Result: spec.Result{Started: at(3)}},
	}
	if got := Tonight(srcs); got == nil || got.Path != "b.json" {
		t.Errorf("Tonight = %v, want b.json", got)
	}
	if got := Tonight(nil); got != nil {
		t.Errorf("Tonight(nil) = %v, want nil", got)
	}
	r, err := Build(srcs, at(4))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Inputs[len(r.Inputs)-1].Path; got != "b.json" {
		t.Errorf("Build's tonight %s, want b.json", got)
	}
}
