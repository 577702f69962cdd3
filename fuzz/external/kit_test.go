package external

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestPythonKit runs the adapter kit's own unit tests (frames, dtypes, the
// serve loop, the test helper): python3 -m unittest in adapters/python.
func TestPythonKit(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "adapters", "python")
	cmd := exec.Command(python(t), "-m", "unittest", "discover", "-s", "tests", "-t", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest in %s: %v\n%s", dir, err, out)
	}
	t.Logf("%s", out)
}
