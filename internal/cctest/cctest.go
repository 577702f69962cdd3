// Package cctest builds the C drivers with which tests check the headers
// of gpu/kernels (generator version 2, the boundary nudges) against Go in
// plain C, before the same arithmetic reaches a GPU.
package cctest

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
)

// Build compiles the C file driver with the system C compiler (cc) as the
// headers require (C11, -O2, no contraction: -ffp-contract=off; every
// warning an error), with the folder kernels on the include path, and
// returns the binary's path. It skips t when cc is missing, saying that
// what is not checked.
func Build(t testing.TB, kernels, driver, what string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skipf("no C compiler (cc) on PATH: %s is not checked here", what)
	}
	bin := filepath.Join(t.TempDir(), "driver")
	build := exec.Command(cc, "-std=c11", "-O2", "-ffp-contract=off", "-Wall", "-Werror",
		"-I", kernels, "-o", bin, driver, "-lm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", build.Args, err, out)
	}
	return bin
}

// Run runs the driver bin with stdin and returns its output's lines.
func Run(t testing.TB, bin string, stdin io.Reader) []string {
	t.Helper()
	run := exec.Command(bin)
	run.Stdin = stdin
	out, err := run.Output()
	if err != nil {
		t.Fatalf("driver: %v", err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("driver output: %v", err)
	}
	return lines
}

// Compare runs the driver bin with stdin and checks its output, line by
// line, against want; a differing line i is reported (the first 10) with
// mismatch(i, got), and a different line count fails t.
func Compare(t testing.TB, bin string, stdin io.Reader, want []string, mismatch func(i int, got string) string) {
	t.Helper()
	got := Run(t, bin, stdin)
	bad := 0
	for i, line := range got {
		if i < len(want) && line != want[i] && bad < 10 {
			t.Errorf("line %d: %s", i, mismatch(i, line))
			bad++
		}
	}
	if len(got) != len(want) {
		t.Fatalf("driver wrote %d lines, want %d", len(got), len(want))
	}
}
