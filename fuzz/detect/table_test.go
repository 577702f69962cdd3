package detect

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/target"
)

// TestModels: by default every CPU drift model that runs without asking;
// named models with their relation; an unknown name and an invariant
// target are errors.
func TestModels(t *testing.T) {
	ms, err := Models("")
	if err != nil || len(ms) == 0 {
		t.Fatalf("Models(\"\") = %v, %v", ms, err)
	}
	for _, m := range ms {
		tg, err := target.Lookup(m.Name)
		if i := tg.Info(); err != nil || i.Invariant || i.OnRequest || i.Device != "cpu" || m.Relation != "" {
			t.Errorf("default model %+v: %+v, %v", m, i, err)
		}
	}
	ms, err = Models("drift-gemm-splitk-by-m@batch_invariance,drift-attn-tile48")
	if err != nil || len(ms) != 2 || ms[0] != (Model{"drift-gemm-splitk-by-m", "batch_invariance"}) || ms[1] != (Model{Name: "drift-attn-tile48"}) {
		t.Errorf("Models(named) = %+v, %v", ms, err)
	}
	for _, bad := range []string{"no-such-target", "oracle-rmsnorm"} {
		if _, err := Models(bad); err == nil {
			t.Errorf("Models(%q): no error", bad)
		}
	}
}

// TestWriteMarkdown: medians as cells, a lower bound marked when at most
// half the runs found the drift.
func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	WriteMarkdown(&b, []Line{{Model: "m", Relation: "r",
		Normal:   Median{Cases: 12, Seconds: 0.5, Found: 5, Runs: 5},
		Boundary: Median{Cases: 900, Seconds: 2, Found: 2, Runs: 5}}})
	want := "| m | r | 12 | 0.500 | >900 (2/5 found) | 2.000 |\n"
	if lines := strings.SplitAfter(b.String(), "\n"); len(lines) != 4 || lines[2] != want {
		t.Errorf("WriteMarkdown =\n%s\nwant third line %q", b.String(), want)
	}
}
