package fuzztest

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// rmsKernel is a Go RMSNorm under test: the sequential schedule, or, with
// drift, 4 lanes whenever the batch has a multiple of 32 rows (the
// TransformerEngine-style path switch on M % 32).
type rmsKernel struct {
	name  string
	drift bool
}

var seqSchedule = oracle.RMSNormSchedule{Reduce: oracle.Sequential, Order: oracle.ScaleThenWeight}

func (k rmsKernel) Info() target.Info {
	return target.Info{Name: k.name, Op: spec.OpRMSNorm, Device: "cpu", Invariant: true, Schedule: seqSchedule.String()}
}

func (k rmsKernel) Run(_ context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	s := seqSchedule
	if k.drift && b.Input.(*oracle.RMSNormInput).Rows%32 == 0 {
		s.Reduce = oracle.Reduction{Threads: 4, Vec: 1}
	}
	y, err := oracle.RMSNorm(*b.Input.(*oracle.RMSNormInput), s, rows)
	if err != nil {
		return nil, err
	}
	if rows == nil {
		rows = make([]int, b.Rows())
		for i := range rows {
			rows[i] = i
		}
	}
	return &target.Output{Rows: rows, Cols: b.Cols(), DType: b.OutDType(), Values: y}, nil
}

// FuzzGoodKernel is the API as a team uses it: a kernel that holds every
// relation passes its seed corpus (and go test -fuzz).
func FuzzGoodKernel(f *testing.F) {
	Fuzz(f, Options{Target: rmsKernel{name: "test-good-rmsnorm"}, CorpusDir: "-"})
}

// TestSearchFindsDrift: the drifting kernel is found by batch invariance,
// shrunk, and written as a case file that names the relation and target.
func TestSearchFindsDrift(t *testing.T) {
	dir := t.TempDir()
	f, err := Search(context.Background(), Options{Target: rmsKernel{name: "test-drift-rmsnorm", drift: true},
		Relations: []string{spec.RelBatchInvariance}, CorpusDir: dir}, 1, 64)
	if err != nil {
		t.Fatal(err)
	}
	if f == nil {
		t.Fatal("64 batch-invariance cases did not find a kernel whose reduction changes at rows % 32 == 0")
	}
	if f.Kind != "mismatch" || f.Relation != spec.RelBatchInvariance || f.TargetA != "test-drift-rmsnorm" {
		t.Fatalf("finding %+v", f)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(names) != 1 {
		t.Fatalf("case files %v (%v), want one", names, err)
	}
	cf, err := corpus.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	if cf.Finding == nil || cf.Finding.Signature != f.Signature || cf.Case.Relation != spec.RelBatchInvariance {
		t.Fatalf("case file %+v", cf)
	}
	t.Logf("found: %s", report(f, []string{names[0]}, "Search"))
}

// TestOptionsErrors: misuse is an error that says what to fix.
func TestOptionsErrors(t *testing.T) {
	k := rmsKernel{name: "test-options-rmsnorm"}
	tests := []struct {
		opts Options
		want string
	}{
		{Options{}, "Options.Target or Options.Exec must be set"},
		{Options{Target: k, Exec: "true"}, "not both"},
		{Options{Target: k, Relations: []string{"speed"}}, `unknown relation "speed"`},
		{Options{Target: k, Relations: []string{spec.RelPathParity}}, "set Options.Against"},
		{Options{Target: k, Relations: []string{spec.RelLogProbParity}}, "does not apply to op rmsnorm"},
		{Options{Target: k, Against: "no-such-target"}, `unknown target "no-such-target"`},
	}
	for _, tt := range tests {
		_, err := newPlan(tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.opts, err, tt.want)
		}
	}
}

// TestExecTarget: an external process is fuzzed the same way (the NumPy
// adapter, exact and invariant: no finding).
func TestExecTarget(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s has no numpy (the fuzz/external tests require it)", py)
	}
	_, file, _, _ := runtime.Caller(0)
	adapter := filepath.Join(filepath.Dir(file), "..", "adapters", "numpy_ops.py")
	f, err := Search(context.Background(), Options{Exec: py + " " + adapter + " rmsnorm", CorpusDir: "-"}, 2, 6)
	if err != nil {
		t.Fatal(err)
	}
	if f != nil {
		t.Fatalf("finding on the exact NumPy RMSNorm: %s", report(f, nil, "Search"))
	}
}
