package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

func TestDetectTable(t *testing.T) {
	var o, e bytes.Buffer
	err := run(&o, &e, []string{"detect", "--models", "drift-gemm-splitk-by-m", "--seeds", "1", "--max-cases", "200"})
	if err != nil {
		t.Fatalf("detect: %v (stderr %s)", err, e.String())
	}
	lines := strings.Split(strings.TrimSpace(o.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[2], "| drift-gemm-splitk-by-m | batch_invariance | ") {
		t.Fatalf("want a header and one line for the model, got:\n%s", o.String())
	}
	// the boundary column of seed 1 is found (the regression budget says
	// within 60 cases): no ">" in it.
	cells := strings.Split(lines[2], "|")
	if b := strings.TrimSpace(cells[5]); strings.HasPrefix(b, ">") || b == "" {
		t.Errorf("boundary cases %q: want a finding within 200 cases", b)
	}
}

func TestDetectUsage(t *testing.T) {
	for _, args := range [][]string{
		{"detect", "--seeds", "0"},
		{"detect", "--case", "{not json"},
		{"detect", "extra"},
	} {
		var o, e bytes.Buffer
		err := run(&o, &e, args)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != spec.ExitUsage {
			t.Errorf("%q: got %v, want a usage error (exit %d)", args, err, spec.ExitUsage)
		}
	}
}
