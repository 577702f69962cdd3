package transformer

import (
	"context"
	"testing"
	"time"
)

// TestCampaign: in a short campaign every control is found (drift models
// localised to their planted site, misuses flagged) and the invariant jobs
// give no finding.
func TestCampaign(t *testing.T) {
	s, err := Campaign{Duration: 5 * time.Second, Seed: 1}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range s.Unexpected {
		t.Errorf("unexpected finding: %s %s: %s", f.Relation, f.Kind, f.Message)
	}
	if len(s.Missed) > 0 {
		t.Errorf("controls not found: %v", s.Missed)
	}
	if s.InvariantCases == 0 {
		t.Error("no invariant case ran")
	}
	for _, f := range s.Findings {
		t.Logf("%-22s after %4d cases, %v: %s", f.Kind, f.CasesBefore, time.Duration(f.Elapsed).Round(time.Millisecond), f.Message[:min(len(f.Message), 140)])
	}
	t.Logf("%d cases (%d invariant, all agreeing) in %v", s.Cases, s.InvariantCases, s.Elapsed.Round(time.Millisecond))
}
