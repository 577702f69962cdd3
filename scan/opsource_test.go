package scan

import (
	"context"
	"fmt"
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
	storeOpFinding(t, f, oracle)
	src := OpSources([]string{drift})[0]
	bad, _ := src.Jobs[0].Draw(1)
	bad.Shape.Rows = 0
	if _, err := src.Check(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "0 items") {
		t.Errorf("a case of 0 items: error %v", err)
	}
}

// storeOpFinding: StoreOpFinding keeps finding f as the drift of the scan
// its Repro names (that scan's map, open), and stores nothing for the
// same case on target invariant, whose scan shows no drift.
func storeOpFinding(t *testing.T, f spec.Finding, invariant string) {
	t.Helper()
	d, err := corpus.OpenDir(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	where, err := StoreOpFinding(context.Background(), d, f, spec.HostEnv())
	names, _ := d.ScanDrifts()
	if err != nil || len(names) != 1 || where != "; scan drift "+d.PathOf(names[0]) {
		t.Fatalf("StoreOpFinding: %q, %v; drifts %v", where, err, names)
	}
	rec, err := d.GetScanDrift(names[0])
	if err != nil || rec.Status.State != "open" || rec.Found.Map == nil || rec.Found.Map.Rule != f.DriftMap.Rule ||
		!strings.HasPrefix(f.Repro, fmt.Sprintf("bitparity scan --target %s --to %d ", rec.Scan.Target, rec.Scan.To)) {
		t.Errorf("stored drift %+v (%v), want the open scan of %q", rec, err, f.Repro)
	}
	g := f
	g.Case.Targets = []string{invariant}
	where, err = StoreOpFinding(context.Background(), d, g, spec.HostEnv())
	if names, _ := d.ScanDrifts(); err != nil || len(names) != 1 || !strings.Contains(where, "not stored") {
		t.Errorf("the case on %s: %q, %v; drifts %v, want nothing stored", invariant, where, err, names)
	}
}
