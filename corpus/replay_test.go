package corpus

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// splitK is a small GEMM case on the split-K-by-M drift model, compared in
// fp32 so that every run shows the drift.
func splitK(seed uint64, rows int, target string) spec.Case {
	c := knownCase(spec.OpGEMM, spec.RelBatchInvariance, spec.Shape{Rows: rows, Hidden: 256, N: 16}, spec.RelParams{Batch: 65}, target)
	c.Out, c.Seed = spec.FP32, seed
	return c
}

// found runs c and returns the file with its finding; it fails the test when
// c finds nothing.
func found(t *testing.T, c spec.Case) *File {
	t.Helper()
	fd, err := fuzz.Check(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if fd == nil {
		t.Fatalf("%+v: no finding", c)
	}
	return NewFile(c, fd, fd.Env, "test")
}

// fixedFinding is the split-K drift finding recorded on the gemm oracle,
// which never drifts: a recheck finds it fixed.
func fixedFinding(t *testing.T) spec.Finding {
	t.Helper()
	fd := *found(t, splitK(2, 64, "drift-gemm-splitk-by-m")).Finding
	fd.Case = splitK(2, 64, target.OracleName(spec.OpGEMM))
	fd.TargetA = fd.Case.Targets[0]
	fd.Signature = spec.Signature(fd)
	return fd
}

func TestReplayVerdicts(t *testing.T) {
	ctx := context.Background()
	drift := found(t, splitK(1, 64, "drift-gemm-splitk-by-m"))
	o, err := Replay(ctx, drift)
	if err != nil || o.Verdict != Reproduced || !o.SameSpot {
		t.Fatalf("drift case: %v %+v", err, o)
	}
	// the same finding claimed for the invariant oracle does not reproduce
	fixed := *drift
	fixed.Case = splitK(1, 64, target.OracleName(spec.OpGEMM))
	if o, err := Replay(ctx, &fixed); err != nil || o.Verdict != NotReproduced {
		t.Errorf("oracle with a recorded finding: %v %+v, want not reproduced", err, o)
	}
	// a pass case on a drift model is a regression
	pass := NewFile(splitK(1, 64, "drift-gemm-splitk-by-m"), nil, spec.Env{}, "")
	if o, err := Replay(ctx, pass); err != nil || o.Verdict != Reproduced {
		t.Errorf("pass case on a drift model: %v %+v, want reproduced (a regression)", err, o)
	}
	if o, err := Replay(ctx, NewFile(splitK(1, 64, target.OracleName(spec.OpGEMM)), nil, spec.Env{}, "")); err != nil || o.Verdict != Passed {
		t.Errorf("pass case on the oracle: %v %+v", err, o)
	}
	// another kind of finding is a change, not a reproduction
	other := *drift
	fd := *drift.Finding
	fd.Kind = "crash"
	other.Finding = &fd
	if o, err := Replay(ctx, &other); err != nil || o.Verdict != Changed {
		t.Errorf("recorded crash, found mismatch: %v %+v, want changed", err, o)
	}
	// a target this build lacks is an error, never a verdict
	gone := *drift
	gone.Case.Targets = []string{"cuda-gemm-not-built"}
	if _, err := Replay(ctx, &gone); err == nil {
		t.Errorf("replay on an unknown target gave a verdict")
	}
}

func TestRecheck(t *testing.T) {
	d := mustDir(t)
	open, _, err := d.Put(found(t, splitK(2, 64, "drift-gemm-splitk-by-m")))
	if err != nil {
		t.Fatal(err)
	}
	// a finding recorded for a target that since became invariant
	fd := fixedFinding(t)
	willFix, _, err := d.Put(NewFile(fd.Case, &fd, spec.Env{KernelHash: "old"}, "test"))
	if err != nil {
		t.Fatal(err)
	}
	// a finding on a GPU target this build lacks
	gpuCase := splitK(3, 64, "cuda-gemm")
	fd2 := fd
	fd2.Case, fd2.TargetA = gpuCase, "cuda-gemm"
	fd2.Signature = spec.Signature(fd2)
	gpu, _, err := d.Put(NewFile(gpuCase, &fd2, spec.Env{GPU: "NVIDIA H200"}, "test"))
	if err != nil {
		t.Fatal(err)
	}
	env := spec.Env{Bitparity: "test", KernelHash: "new-kernel"}
	res, err := Recheck(context.Background(), d, env, false)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]RecheckResult{}
	for _, r := range res {
		by[r.Name] = r
	}
	if r := by[open]; r.Err != nil || r.Fixed || r.Outcome.Verdict != Reproduced {
		t.Errorf("drift finding: %+v, want still failing", r)
	}
	if r := by[willFix]; r.Err != nil || !r.Fixed {
		t.Errorf("oracle finding: %+v, want fixed", r)
	}
	if r := by[gpu]; r.Err == nil || r.Fixed {
		t.Errorf("GPU finding on a CPU build: %+v, want an error and no status change", r)
	}
	f, _ := d.Get(willFix)
	if f.Status.State != StateFixed || f.Status.FixedKernelHash != "new-kernel" || f.Status.FixedEnv == nil || f.Status.FixedEnv.Bitparity != "test" || f.Status.FixedAt.IsZero() {
		t.Errorf("fixed status %+v", f.Status)
	}
	if g, _ := d.Get(gpu); g.Status.State != StateOpen || !g.Status.Checked.IsZero() {
		t.Errorf("unrunnable case status changed: %+v", g.Status)
	}
	if o, _ := d.Get(open); o.Status.State != StateOpen || o.Status.Checked.IsZero() {
		t.Errorf("still failing case status %+v, want open with a check time", o.Status)
	}
	// a second recheck skips the fixed one
	res, _ = Recheck(context.Background(), d, env, false)
	for _, r := range res {
		if r.Name == willFix {
			t.Errorf("a fixed case was rechecked")
		}
	}
}

func TestMinimize(t *testing.T) {
	f := found(t, splitK(4, 60, "drift-gemm-splitk-by-m"))
	g, st, err := Minimize(context.Background(), f, shrink.Options{MaxTries: 300})
	if err != nil {
		t.Fatal(err)
	}
	if caseSize(g) >= caseSize(f) {
		t.Errorf("minimized case has %d input values, the original %d", caseSize(g), caseSize(f))
	}
	if g.Signature != f.Signature || g.Finding.Original == nil {
		t.Errorf("signature %s (want %s), original %v", g.Signature, f.Signature, g.Finding.Original)
	}
	o, err := Replay(context.Background(), g)
	if err != nil || o.Verdict != Reproduced {
		t.Errorf("minimized case does not reproduce: %v %+v", err, o)
	}
	if _, err := Encode(g); err != nil {
		t.Errorf("minimized file does not encode: %v", err)
	}
	t.Logf("minimized %+v -> %+v in %d steps, %d tries, %v", f.Case.Shape, g.Case.Shape, st.Steps, st.Tried, st.Elapsed)
	if _, _, err := Minimize(context.Background(), NewFile(seedCase(1), nil, spec.Env{}, ""), shrink.Options{}); err != ErrNoFinding {
		t.Errorf("minimize without a finding: %v", err)
	}
}

func TestDedup(t *testing.T) {
	mk := func(seed uint64, rows int, created time.Time, state string) Entry {
		f := found(t, splitK(seed, rows, "drift-gemm-splitk-by-m"))
		f.Created = created
		if state == StateFixed {
			f.Status = Status{State: StateFixed, FixedAt: created}
		}
		n, _ := f.Name()
		return Entry{Name: n, File: f}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := mk(5, 64, t0, StateOpen)
	b := mk(6, 32, t0.Add(time.Hour), StateOpen) // smaller: kept
	c := mk(7, 16, t0, StateFixed)               // smallest but fixed: dropped while others are open
	pass := Entry{Name: "p", File: NewFile(seedCase(1), nil, spec.Env{}, "")}
	groups := Dedup([]Entry{a, b, c, pass})
	if len(groups) != 1 {
		t.Fatalf("groups %+v, want one", groups)
	}
	g := groups[0]
	if g.Keep != b.Name || len(g.Drop) != 2 || !strings.Contains(strings.Join(g.Drop, ","), a.Name) || !strings.Contains(strings.Join(g.Drop, ","), c.Name) {
		t.Errorf("group %+v: want keep %s (smallest open), drop %s and %s", g, b.Name, a.Name, c.Name)
	}
}

func TestEnvDiff(t *testing.T) {
	rec := spec.Env{Bitparity: "v1", GPU: "NVIDIA H200", CC: "9.0", Driver: "550", CUDA: "12.4", KernelHash: "abc", OS: "linux"}
	here := spec.Env{Bitparity: "v1", OS: "linux"}
	d := EnvDiff(rec, here)
	if len(d) != 5 || d[0] != "gpu: recorded NVIDIA H200, here none" {
		t.Errorf("diff %q", d)
	}
	if len(EnvDiff(here, here)) != 0 {
		t.Errorf("an environment differs from itself")
	}
}

func TestMerge(t *testing.T) {
	a, b, dst := mustDir(t), mustDir(t), mustDir(t)
	a.Put(NewFile(seedCase(1), nil, spec.Env{}, ""))
	a.Put(NewFile(seedCase(2), nil, spec.Env{}, ""))
	b.Put(NewFile(seedCase(2), nil, spec.Env{}, ""))
	b.Put(NewFile(seedCase(3), nil, spec.Env{}, ""))
	dst.Put(NewFile(seedCase(3), nil, spec.Env{}, "mine"))
	rep, err := Merge(dst, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Added) != 2 || len(rep.Existing) != 2 {
		t.Errorf("added %v existing %v", rep.Added, rep.Existing)
	}
	n3, _ := NewFile(seedCase(3), nil, spec.Env{}, "").Name()
	if f, _ := dst.Get(n3); f.Source != "mine" {
		t.Errorf("merge overwrote a stored case")
	}
}
