package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/internal/pythontest"
)

// TestExplainExec: explain takes the same --exec as run. The case file run
// stores for a NumPy adapter whose RMSNorm sums in two halves from 130 rows
// on is explained with the adapter given (the rows below the onset match a
// schedule of the model space, the rows from it none); without --exec the
// case's target is unknown and explain says so (exit 2).
func TestExplainExec(t *testing.T) {
	py := pythontest.NumPy(t)
	dir := t.TempDir()
	adapter := py + " " + adapterScript("examples/numpy_split.py") + " --from 130"
	if out, errs, code := cli(t, dir, "run", "--exec", adapter, "--relations", "batch_invariance", "--duration", "10s", "--corpus", "c"); code != 1 {
		t.Fatalf("run --exec: exit %d, want 1 (the drift)\n%s\n%s", code, out, errs)
	}
	c, _ := onlyCaseFile(t, filepath.Join(dir, "c"))
	out, errs, code := cli(t, dir, "explain", "--exec", adapter, c)
	if code != 0 || !strings.Contains(out, "rows <= 129 -> A, rows >= 130 -> B") || !strings.Contains(out, "rows >= 130: no schedule") {
		t.Fatalf("explain --exec: exit %d, want 0 with the onset at 130 and no schedule past it\n%s\n%s", code, out, errs)
	}
	_, errs, code = cli(t, dir, "explain", c)
	if code != 2 || !strings.Contains(errs, `unknown target "exec:numpy-split.rmsnorm"`) {
		t.Errorf("explain without --exec: exit %d, want 2 naming the target\n%s", code, errs)
	}
}
