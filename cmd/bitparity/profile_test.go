package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/profile"
	"github.com/bitparity/bitparity/spec"
)

// smallProfile is the CPU-sized test profile: hidden 768, bf16, max_tokens 400.
const smallProfile = "../../profile/testdata/small.json"

func TestRunProfileShrinkPastNeedsProfile(t *testing.T) {
	var out, errs bytes.Buffer
	err := run(&out, &errs, []string{"run", "--duration", "1s", "--shrink-past-profile"})
	if code := exitCode(err); code != spec.ExitUsage || !strings.Contains(fmt.Sprint(err), "--shrink-past-profile needs --profile") {
		t.Errorf("exit %d (%v), want %d and the flag named", code, err, spec.ExitUsage)
	}
}

// TestRunProfileHoldsModelShape runs a campaign at the small profile
// against drift-rmsnorm-vllm-256 (drift from 256 rows on, the upper half
// of 1..400) and wants the finding stated at the model's shape: hidden
// 768, bf16, eps 1e-5, and its batch at the onset.
func TestRunProfileHoldsModelShape(t *testing.T) {
	if testing.Short() {
		t.Skip("a campaign")
	}
	p, err := profile.Load(smallProfile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	out, errs, code := bp(t, "run", "--profile", smallProfile, "--targets", "drift-rmsnorm-vllm-256",
		"--relations", spec.RelBatchInvariance, "--duration", "30s", "--seed", "5", "--json", path)
	if code != spec.ExitOK && code != spec.ExitFinding {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	res := readJSON[spec.Result](t, path)
	if len(res.Findings) != 1 {
		t.Fatalf("%d findings in %d cases, want the drift\n%s", len(res.Findings), res.Cases, out)
	}
	c := res.Findings[0].Case
	if err := p.Holds(c); err != nil {
		t.Errorf("minimal case: %v", err)
	}
	if n := max(c.Shape.Rows, c.Rel.Batch); n != 256 {
		t.Errorf("minimal case: batch %d, want the onset 256: %+v", n, c)
	}
	if !strings.Contains(out, "by decile of 1..400:\n      1..40 ") || !strings.Contains(out, "\n    361..400 ") {
		t.Errorf("no histogram of the drawn batch sizes:\n%s", out)
	}
}

// TestScanProfileDType: a scan at a profile takes its dtype and eps
// unless --in, --out or --eps are given.
func TestScanProfileDType(t *testing.T) {
	b, err := os.ReadFile(smallProfile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fp32.json")
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), `"bf16"`, `"fp32"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "fp32 -> fp32"},
		{[]string{"--in", "bf16"}, "bf16 -> fp32"},
	} {
		args := append([]string{"scan", "--target", "oracle-rmsnorm", "--profile", path, "--to", "2", "--dir", t.TempDir()}, tt.args...)
		out, errs, code := bp(t, args...)
		if code != 0 || !strings.Contains(out, "hidden 768") || !strings.Contains(out, tt.want) {
			t.Errorf("%v: exit %d, want hidden 768 and %q\n%s%s", tt.args, code, tt.want, out, errs)
		}
	}
}
