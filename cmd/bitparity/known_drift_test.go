package main

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// driftMod is the period of test-claims-invariant-modk-rmsnorm's drift.
var driftMod atomic.Int64

// modK is a vendor kernel under test that claims batch invariance but
// computes batches whose row count is a multiple of driftMod another way
// (its outputs' lowest bf16 mantissa bit flipped): the drift map of its
// batch-invariance finding is rows % driftMod == 0 -> B.
type modK struct{}

func (modK) Info() target.Info {
	i := mustLookup("oracle-rmsnorm").Info()
	i.Name, i.Invariant, i.Expect, i.Device = "test-claims-invariant-modk-rmsnorm", true, nil, "test"
	i.Models = "oracle RMSNorm whose batches of a multiple of driftMod rows differ (test only)"
	return i
}

func (modK) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	out, err := mustLookup("oracle-rmsnorm").Run(ctx, b, rows)
	if err != nil || b.Rows()%int(driftMod.Load()) != 0 {
		return out, err
	}
	for i, v := range out.Values {
		out.Values[i] = math.Float32frombits(math.Float32bits(v) ^ 1<<16)
	}
	return out, nil
}

func init() {
	driftMod.Store(5)
	target.Register("test-claims-invariant-modk-rmsnorm", func() (target.Target, error) { return modK{}, nil })
}

// TestRunKnownNewDrift: --known lists a finding as known only when it is
// the same drift as the known case. A run on a target whose drift is rows
// % 5 == 0 is known against its own corpus; the same target drifting on
// rows % 7 == 0 (the same kind, op, relation and target: another bug) fails
// the --known run.
func TestRunKnownNewDrift(t *testing.T) {
	defer driftMod.Store(5)
	dir := t.TempDir()
	args := []string{"run", "--targets", "test-claims-invariant-modk-rmsnorm", "--relations", "batch_invariance",
		"--max-cases", "300", "--workers", "1", "--seed", "3", "--duration", "20s"}
	res := filepath.Join(dir, "run.json")
	out, errs, code := runArgs(append(args, "--json", res)...)
	if code != spec.ExitFinding || !strings.Contains(out, "rows % 5 == 0") {
		t.Fatalf("rows %% 5 drift without --known: exit %d\n%s\n%s", code, out, errs)
	}
	known := filepath.Join(dir, "known")
	importResult(t, res, known)
	out, errs, code = runArgs(append(args, "--known", known, "--seed", "4")...)
	if code != spec.ExitOK || !strings.Contains(out, "known (--known "+known) {
		t.Fatalf("the same drift with --known: exit %d\n%s\n%s", code, out, errs)
	}
	driftMod.Store(7)
	out, errs, code = runArgs(append(args, "--known", known)...)
	if code != spec.ExitFinding || !strings.Contains(out, "rows % 7 == 0") || !strings.Contains(out, "UNEXPECTED") || strings.Contains(out, "known (--known") {
		t.Fatalf("a new drift (rows %% 7) on the known target with --known: exit %d, want 1 and UNEXPECTED\n%s\n%s", code, out, errs)
	}
}
