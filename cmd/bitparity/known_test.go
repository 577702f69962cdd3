package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// claimsInvariant is a vendor kernel under test that claims batch
// invariance but picks its reduction by rows % 32 (drift-rmsnorm-te-mod32
// under another name): its findings are real, not negative controls.
type claimsInvariant struct{ target.Target }

func (c claimsInvariant) Info() target.Info {
	i := c.Target.Info()
	i.Name, i.Invariant, i.Expect, i.Device = "test-claims-invariant-rmsnorm", true, nil, "test"
	return i
}

func (c claimsInvariant) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	return c.Target.Run(ctx, b, rows)
}

func init() {
	target.Register("test-claims-invariant-rmsnorm", func() (target.Target, error) {
		t, err := target.Lookup("drift-rmsnorm-te-mod32")
		return claimsInvariant{t}, err
	})
}

// importResult imports the findings of result file res into the corpus
// folder known (made if missing) and returns the case files it added,
// failing the test on an error or when it adds none.
func importResult(t *testing.T, res, known string) []string {
	t.Helper()
	r, err := corpus.ReadResult(res)
	if err != nil {
		t.Fatal(err)
	}
	d, err := corpus.OpenDir(known, true)
	if err != nil {
		t.Fatal(err)
	}
	added, _, ierrs := corpus.ImportResult(d, r)
	if len(ierrs) > 0 || len(added) == 0 {
		t.Fatalf("import: %v %v", added, ierrs)
	}
	return added
}

// TestRunKnown: a real finding fails the run (exit 1); with the case in a
// --known folder the same run lists it as known and exits 0; once the case
// is marked fixed it is a regression and fails again. A --known folder
// that does not exist is a usage error.
func TestRunKnown(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "run.json")
	args := []string{"run", "--targets", "test-claims-invariant-rmsnorm", "--relations", "batch_invariance",
		"--max-cases", "400", "--workers", "1", "--no-shrink", "--seed", "3"}
	out, errs, code := runArgs(append(args, "--json", res)...)
	if code != spec.ExitFinding || !strings.Contains(out, "UNEXPECTED") {
		t.Fatalf("without --known: exit %d\n%s\n%s", code, out, errs)
	}
	known := filepath.Join(dir, "known")
	added := importResult(t, res, known)
	out, errs, code = runArgs(append(args, "--known", known)...)
	if code != spec.ExitOK || !strings.Contains(out, "known (--known "+known) || strings.Contains(out, "UNEXPECTED") {
		t.Fatalf("with --known: exit %d\n%s\n%s", code, out, errs)
	}
	for _, name := range added {
		p := filepath.Join(known, name)
		f, err := corpus.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f.Status.State, f.Status.FixedAt = corpus.StateFixed, time.Now().UTC().Truncate(time.Second)
		b, err := corpus.Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, code = runArgs(append(args, "--known", known)...)
	if code != spec.ExitFinding || !strings.Contains(out, "regression of "+known) {
		t.Fatalf("with the case marked fixed: exit %d\n%s\n%s", code, out, errs)
	}
	if _, errs, code := runArgs(append(args, "--known", filepath.Join(dir, "nope"))...); code != spec.ExitUsage {
		t.Fatalf("missing --known folder: exit %d %s", code, errs)
	}
}
