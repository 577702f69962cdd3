package external

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	pyOnce sync.Once
	pyPath string
	pyErr  error
)

// python returns a Python 3 interpreter that imports numpy:
// $BITPARITY_PYTHON, else the first of /usr/bin/python3 (Debian's, where
// python3-numpy installs) and python3 on PATH. Without one the test fails,
// unless BITPARITY_SKIP_PYTHON=1 says to skip.
func python(t testing.TB) string {
	t.Helper()
	pyOnce.Do(func() {
		cands := []string{"/usr/bin/python3", "python3"}
		if p := os.Getenv("BITPARITY_PYTHON"); p != "" {
			cands = []string{p}
		}
		var tried []string
		for _, c := range cands {
			out, err := exec.Command(c, "-c", "import numpy; print(numpy.__version__)").CombinedOutput()
			if err == nil {
				pyPath = c
				return
			}
			tried = append(tried, fmt.Sprintf("%s: %v: %s", c, err, strings.TrimSpace(string(out))))
		}
		pyErr = fmt.Errorf("no python3 with numpy (tried %s); install Debian's python3-numpy "+
			"(apt-get install -y python3-numpy), point BITPARITY_PYTHON at an interpreter that has numpy, "+
			"or set BITPARITY_SKIP_PYTHON=1 to skip the adapter tests", strings.Join(tried, "; "))
	})
	if pyErr != nil {
		if os.Getenv("BITPARITY_SKIP_PYTHON") == "1" {
			t.Skip("BITPARITY_SKIP_PYTHON=1: ", pyErr)
		}
		t.Fatal(pyErr)
	}
	return pyPath
}

// torchPython is python(t) when it also imports torch, for the tests of
// adapters/torch_ops.py; they run only with BITPARITY_TEST_TORCH=1 (torch
// start-ups take seconds) and skip where the interpreter has no torch.
func torchPython(t testing.TB) string {
	t.Helper()
	if os.Getenv("BITPARITY_TEST_TORCH") != "1" {
		t.Skip("set BITPARITY_TEST_TORCH=1 to test adapters/torch_ops.py (needs torch; seconds of torch start-ups a test)")
	}
	py := python(t)
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skipf("%s has no torch", py)
	}
	return py
}

// repoRoot is the module root (two levels above this package).
func repoRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// adapterCmd is the command line running a script of the repository with
// the test's interpreter.
func adapterCmd(t testing.TB, script string, args ...string) string {
	cmd := python(t) + " " + filepath.Join(repoRoot(t), script)
	for _, a := range args {
		cmd += " " + a
	}
	return cmd
}
