package words

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func span(from, to int) []int {
	var vs []int
	for v := from; v <= to; v++ {
		vs = append(vs, v)
	}
	return vs
}

// TestDriftGolden says one map of each sort in the one wording; the golden
// file is testdata/drift.golden (go test ./reports/words -run Drift -update).
func TestDriftGolden(t *testing.T) {
	rows := append(span(1, 104), 128, 159, 160, 192, 255, 256, 257, 320)
	maps := []struct {
		name string
		d    *spec.DriftMap
	}{
		{"nil", nil},
		{"periodic, sampled", &spec.DriftMap{Dim: "rows", From: 1, To: 320, Values: rows, Runs: 2, Draws: 3,
			Kind: "periodic", Rule: "rows % 32 == 0 -> B, otherwise -> A",
			Classes: []spec.DriftClass{{Label: "A", Values: []int{1, 2}}, {Label: "B", Values: []int{32}}}}},
		{"threshold, every value", &spec.DriftMap{Dim: "rows", From: 1, To: 64, Values: span(1, 64), Runs: 2,
			Kind: "threshold", Rule: "rows <= 15 -> nondeterministic, rows >= 16 -> deterministic",
			Classes: []spec.DriftClass{{Label: "nondeterministic", Values: span(1, 15)}, {Label: "deterministic", Values: span(16, 64)}}}},
		{"path parity", &spec.DriftMap{Dim: "kv", From: 1, To: 100, Values: span(1, 100), Runs: 2, Draws: 3,
			Kind: "threshold", Rule: "kv <= 48 -> agree, kv >= 49 -> differ",
			Classes: []spec.DriftClass{{Label: "agree", Values: span(1, 48)}, {Label: "differ", Values: span(49, 100)}}}},
		{"two dimensions", &spec.DriftMap{Dim: "batch", From: 1, To: 600, Values: []int{1, 2, 255, 256, 600}, Runs: 2,
			Kind: "threshold", Rule: "batch <= 255 -> A, batch >= 256 -> B",
			Classes: []spec.DriftClass{{Label: "A", Values: []int{1, 2, 255}}, {Label: "B", Values: []int{256, 600}}},
			Also: []spec.DriftMap{{Dim: "position", At: "batch=300", From: 0, To: 299, Values: span(0, 299), Runs: 2,
				Kind: "periodic", Rule: "position % 8 == 7 -> B, otherwise -> A",
				Classes: []spec.DriftClass{{Label: "A", Values: []int{0}}, {Label: "B", Values: []int{7}}}}}}},
		{"no dimension splits", &spec.DriftMap{Dim: "rows", From: 1, To: 320, Values: rows, Runs: 2,
			Kind: "uniform", Rule: "every rows -> A", Classes: []spec.DriftClass{{Label: "A", Values: rows}},
			Also: []spec.DriftMap{{Dim: "position", At: "batch=8", From: 0, To: 7, Values: span(0, 7), Runs: 2,
				Kind: "uniform", Rule: "every position -> A", Classes: []spec.DriftClass{{Label: "A", Values: span(0, 7)}}}}}},
		{"positions that differ", &spec.DriftMap{Dim: "rows", From: 250, To: 290, Values: span(250, 290), Runs: 1, Draws: 2,
			Kind: "threshold", Rule: "rows <= 264 -> A, rows >= 265 -> B", Note: "B: positions >= 264 differ",
			Classes: []spec.DriftClass{{Label: "A", Values: span(250, 264)}, {Label: "B", Values: span(265, 290)}}}},
		{"irregular", &spec.DriftMap{Dim: "rows", From: 1, To: 40, Values: span(1, 40), Runs: 2, Kind: "irregular",
			Classes: []spec.DriftClass{{Label: "A", Values: []int{1, 2, 3, 7, 9, 10, 11, 12, 20, 22, 24, 26, 28, 30, 32, 34, 36}},
				{Label: "B", Values: []int{4, 5, 6, 8}}, {Label: "nondeterministic", Values: span(13, 19)}}}},
		{"crash", &spec.DriftMap{Dim: "rows", From: 1, To: 320, Values: span(1, 320), Runs: 2, Kind: "periodic",
			Rule:    "rows % 89 == 0 -> crash, otherwise -> runs",
			Classes: []spec.DriftClass{{Label: "runs", Values: span(1, 88)}, {Label: "crash", Values: []int{89, 178, 267}}}}},
		{"recorded before ranges", &spec.DriftMap{Dim: "rows", Kind: "periodic", Rule: "rows % 32 == 0 -> A, otherwise -> B",
			Classes: []spec.DriftClass{{Label: "A"}, {Label: "B"}}}},
	}
	var b strings.Builder
	for _, m := range maps {
		got := Drift(m.d)
		if strings.Contains(got, "invariant") {
			t.Errorf("%s: %q says invariant", m.name, got)
		}
		b.WriteString(m.name + ": " + got + "\n")
	}
	golden := filepath.Join("testdata", "drift.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./reports/words -run Drift -update writes it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("Drift:\n%s\nwant (%s):\n%s", b.String(), golden, want)
	}
}

func TestSpans(t *testing.T) {
	for _, tc := range []struct {
		vs   []int
		max  int
		want string
	}{
		{nil, 8, ""},
		{[]int{1, 2, 3, 7, 9, 10}, 8, "1..3, 7, 9..10"},
		{[]int{1, 3, 5, 7}, 2, "1, 3, ..."},
	} {
		if got := Spans(tc.vs, tc.max); got != tc.want {
			t.Errorf("Spans(%v, %d) = %q, want %q", tc.vs, tc.max, got, tc.want)
		}
	}
}
