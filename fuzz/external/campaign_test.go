package external

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestCampaignOverNumpy runs a short campaign over the NumPy adapter's five
// ops, all exact, with every relation that applies (batch invariance,
// padding, oracle parity under the declared schedule, determinism, and
// prefill vs decode path parity from AddAll's pair): an adapter that
// claims a schedule and invariance and holds them gives no finding.
func TestCampaignOverNumpy(t *testing.T) {
	var cmds []string
	for _, op := range []string{"rmsnorm", "gemm", "logprob", "attn_prefill", "attn_decode"} {
		cmds = append(cmds, adapterCmd(t, "adapters/numpy_ops.py", op))
	}
	names, err := AddAll(context.Background(), cmds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer CloseAll()
	want := []string{"exec:numpy.rmsnorm", "exec:numpy.gemm", "exec:numpy.logprob", "exec:numpy.attn_prefill", "exec:numpy.attn_decode"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("names %v, want %v", names, want)
	}
	pairs := map[string]bool{}
	for _, p := range relate.Pairs() {
		pairs[p.String()] = true
	}
	for _, p := range []string{"path_parity exec:numpy.attn_prefill,exec:numpy.attn_decode",
		"oracle_parity exec:numpy.rmsnorm", "batch_invariance exec:numpy.gemm", "padding exec:numpy.logprob",
		"determinism exec:numpy.attn_decode"} {
		if !pairs[p] {
			t.Errorf("pair %q missing from relate.Pairs()", p)
		}
	}
	c := &fuzz.Campaign{Duration: 5 * time.Second, Seed: 1, Targets: names, Workers: 2}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Cases < 20 {
		t.Fatalf("only %d cases in 4 s", res.Cases)
	}
	for _, f := range res.Findings {
		t.Errorf("finding on an exact, invariant adapter: %s %s %s/%s row %d col %d: %s vs %s (%d ulps) %s %s; case %+v",
			f.Kind, f.Relation, f.TargetA, f.TargetB, f.Row, f.Col, f.A.Hex, f.B.Hex, f.ULPs, f.Message, f.Error, f.Case.Shape)
	}
	t.Logf("%d cases, %d findings", res.Cases, len(res.Findings))
}

// TestCrashFinding: a relation run on an adapter that dies on the case
// gives a finding of kind "crash" carrying the case and the adapter's
// last words, and the target serves the next case from a new process.
func TestCrashFinding(t *testing.T) {
	name := "exec:test-crash"
	Register(name, adapterCmd(t, "fuzz/external/testdata/misbehave.py", "crash"), spec.OpRMSNorm, Options{})
	defer CloseAll()
	c := testCase(spec.OpRMSNorm, spec.BF16, spec.BF16, spec.DistNormal, 5)
	c.Relation, c.Targets = spec.RelDeterminism, []string{name}
	c.Shape = spec.Shape{Rows: 13, Hidden: 64}
	f, err := fuzz.Check(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if f == nil || f.Kind != "crash" || !strings.Contains(f.Error, "boom: planted crash") || f.Case.Shape.Rows != 13 {
		t.Fatalf("finding %+v", f)
	}
	c.Shape.Rows = 12
	if f, err := fuzz.Check(context.Background(), c); err != nil || f != nil {
		t.Fatalf("the next case: finding %+v, error %v", f, err)
	}
	tg, err := target.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if n := tg.(*Target).Starts(); n != 2 {
		t.Fatalf("started %d times, want 2 (one restart)", n)
	}
}

// TestCommands: the command lines of external targets, which a repro line
// passes as --exec flags, quoted for a shell.
func TestCommands(t *testing.T) {
	Register("exec:test-flags", `python3 it's.py rmsnorm`, spec.OpRMSNorm, Options{})
	c := spec.Case{Op: spec.OpRMSNorm, Relation: spec.RelPathParity, Targets: []string{"oracle-rmsnorm", "exec:test-flags"}}
	got := spec.ReproLine(c, Commands(c.Targets...)...)
	if want := `bitparity run --exec 'python3 it'\''s.py rmsnorm' --case '`; !strings.HasPrefix(got, want) {
		t.Fatalf("repro line = %s, want it to start %s", got, want)
	}
	if got := Commands("oracle-rmsnorm"); len(got) != 0 {
		t.Fatalf("Commands of a Go target = %q, want none", got)
	}
}
