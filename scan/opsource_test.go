package scan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
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
	src := OpSources([]string{drift})[0]
	bad, _ := src.Jobs[0].Draw(1)
	bad.Shape.Rows = 0
	if _, err := src.Check(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "0 items") {
		t.Errorf("a case of 0 items: error %v", err)
	}
}
