// Package pythontest finds the Python interpreter with which tests run
// the NumPy adapters of adapters/.
package pythontest

import (
	"os"
	"os/exec"
	"testing"
)

// NumPy returns the first of $BITPARITY_PYTHON, /usr/bin/python3 and
// python3 that imports numpy. Without one it skips t when
// BITPARITY_SKIP_PYTHON=1, else fails t saying how to get one.
func NumPy(t testing.TB) string {
	t.Helper()
	for _, c := range []string{os.Getenv("BITPARITY_PYTHON"), "/usr/bin/python3", "python3"} {
		if c != "" && exec.Command(c, "-c", "import numpy").Run() == nil {
			return c
		}
	}
	if os.Getenv("BITPARITY_SKIP_PYTHON") == "1" {
		t.Skip("BITPARITY_SKIP_PYTHON=1 and no python3 with numpy")
	}
	t.Fatal("no python3 with numpy: apt-get install python3-numpy, or BITPARITY_SKIP_PYTHON=1 to skip")
	return ""
}
