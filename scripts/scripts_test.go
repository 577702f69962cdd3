// Package scripts holds no Go: its test runs the measurement scripts' own
// unit tests (test_*.py beside this file) with python3.
package scripts

import (
	"os/exec"
	"testing"

	"github.com/bitparity/bitparity/internal/pythontest"
)

// TestMeasurementScripts runs python3 -m unittest on test_*.py here: the
// benchmark summary's figures and the GEMM loop's floor (its torch test is
// skipped where torch is not installed).
func TestMeasurementScripts(t *testing.T) {
	cmd := exec.Command(pythontest.NumPy(t), "-m", "unittest", "discover", "-s", ".", "-p", "test_*.py", "-v")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest in scripts: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
