package scan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
)

// TestOpSourceCampaign: a campaign over the op package target
// drift-moe-router-splitk-by-m (its router GEMM takes split-K 4 up to 64
// tokens) finds it, shrinks the batch to exactly 65 tokens and maps the
// onset, in the op's words; the oracle's job runs cases and finds nothing;
// names that are no op package's target make no source.
func TestOpSourceCampaign(t *testing.T) {
	const drift, oracle = "drift-moe-router-splitk-by-m", "oracle-moe_router"
	if got := OpSources([]string{"oracle-gemm", drift, "nope"}); len(got) != 1 || got[0].Name != drift {
		t.Fatalf("OpSources: %d sources, want %s alone", len(got), drift)
	}
	c := &fuzz.Campaign{Duration: time.Second, Seed: 1, Workers: 1, Targets: []string{drift, oracle},
		Sources: OpSources([]string{drift, oracle})}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("%d findings, want the drift's one: %+v", len(res.Findings), res.Findings)
	}
	f := res.Findings[0]
	if f.TargetA != drift || !f.Expected || f.Case.Shape.Rows != 65 || f.DriftMap == nil ||
		f.DriftMap.Rule != "tokens <= 64 -> A, tokens >= 65 -> B" || !strings.Contains(f.Message, "changed experts") {
		t.Errorf("finding on %s (expected %v) at %d tokens, map %+v: %s", f.TargetA, f.Expected, f.Case.Shape.Rows, f.DriftMap, f.Message)
	}
	if !strings.HasPrefix(f.Repro, "bitparity scan --target "+drift+" --to 81 ") {
		t.Errorf("repro %q, want the scan of 1..81 tokens", f.Repro)
	}
	for _, s := range res.Targets {
		if s.Target == oracle && (s.Cases == 0 || s.Findings != 0 || !s.Invariant) {
			t.Errorf("%s: %+v, want cases and no finding", oracle, s)
		}
	}
	if w := SourcesWords(OpSources([]string{drift, oracle})); w != ", and the op targets "+drift+" (batch_invariance), "+oracle+" (batch_invariance)" {
		t.Errorf("SourcesWords: %q", w)
	}
	if w := SourcesWords(nil); w != "" {
		t.Errorf("SourcesWords of no source: %q, want none", w)
	}
	replayOpFinding(t, f, oracle)
	src := OpSources([]string{drift})[0]
	bad, _ := src.Jobs[0].Draw(1)
	bad.Shape.Rows = 0
	if _, err := src.Check(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "shape.rows: 0, want 1..") {
		t.Errorf("a case of 0 items: error %v", err)
	}
}

// replayOpFinding: finding f, kept as a case file (corpus.NewFile, as a
// run's recorder stores it), reads back and reproduces through Checkers
// at the same row, element and bits; the same case on target invariant
// does not reproduce.
func replayOpFinding(t *testing.T, f spec.Finding, invariant string) {
	t.Helper()
	d, err := corpus.OpenDir(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	name, _, err := d.Put(corpus.NewFile(f.Case, &f, spec.HostEnv(), "campaign"))
	if err != nil {
		t.Fatalf("put the case of %s: %v", f.TargetA, err)
	}
	file, err := corpus.ReadFile(d.PathOf(name))
	if err != nil {
		t.Fatal(err)
	}
	o, err := corpus.Replay(context.Background(), file, Checkers()...)
	if err != nil || o.Verdict != corpus.Reproduced || !o.SameSpot {
		t.Fatalf("replay of %s: %+v, %v; want reproduced at the same spot", name, o, err)
	}
	file.Case.Targets = []string{invariant}
	o, err = corpus.Replay(context.Background(), file, Checkers()...)
	if err != nil || o.Verdict != corpus.NotReproduced {
		t.Errorf("the case on %s: %+v, %v; want not reproduced", invariant, o, err)
	}
	file.Case.Targets = []string{"quant-fp8-per-token"}
	if _, err := corpus.Replay(context.Background(), file, Checkers()...); err == nil || !strings.Contains(err.Error(), "quant-fp8-per-token is a target of op quant_fp8, not moe_router") {
		t.Errorf("the case on another op's target: %v", err)
	}
}
