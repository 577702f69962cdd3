package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInterrupted: an interrupted campaign is never green. Its cells that
// would pass or ran nothing are "interrupted", and every format says so:
// the text and Markdown headline, the JSON summary and input, a JUnit
// <error> per such cell, the HTML banner. A finding's cell keeps its status.
func TestInterrupted(t *testing.T) {
	b, err := os.ReadFile(night2)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["interrupted"] = true
	b, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "interrupted.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := build(t, night1, path)
	if !r.Summary.Interrupted || !r.Inputs[len(r.Inputs)-1].Interrupted || r.Inputs[0].Interrupted {
		t.Errorf("summary interrupted %v, inputs %+v: want tonight's only", r.Summary.Interrupted, r.Inputs)
	}
	checkCells(t, r, map[string]string{
		"rmsnorm/batch_invariance/oracle-rmsnorm":       CellInterrupted,
		"gemm/batch_invariance/cublas-gemm":             CellInterrupted,
		"rmsnorm/batch_invariance/drift-rmsnorm-rows32": CellExpected,
		"rmsnorm/padding/cuda-rmsnorm":                  CellFail,
	})
	for format, want := range map[string][]string{
		"text":     {"INTERRUPTED: tonight's campaign", "interrupted  rmsnorm"},
		"markdown": {"**INTERRUPTED**", "⏹️ interrupted"},
		"json":     {`"interrupted": true`, `"status": "interrupted"`},
		"junit":    {`<error message="the campaign was interrupted after`, `type="interrupted"`, `name="interrupted" value="true"`},
		"html":     {"interrupted: a signal stopped tonight", `c-interrupted`},
	} {
		out := written(t, r, format)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s report lacks %q", format, w)
			}
		}
	}
}
