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
	s, err := Campaign{Duration: 8 * time.Second, Seed: 1, ShrinkBudget: time.Second}.Run(context.Background())
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
		t.Logf("%-8s after %3d cases, %v, minimal in %v (%d steps, %d layers, %d requests of <= %d tokens, hidden %d): %s",
			f.Kind, f.CasesBefore, time.Duration(f.Elapsed).Round(time.Millisecond), time.Duration(f.ToMinimal).Round(time.Millisecond),
			f.ShrinkSteps, f.Case.Shape.Rows, f.Case.Shape.Seqs, f.Case.Shape.SeqLen, f.Case.Shape.Hidden, f.Message[:min(len(f.Message), 200)])
		if f.Original != nil && (f.Case.Shape.Rows > f.Original.Shape.Rows || f.Case.Shape.Hidden > f.Original.Shape.Hidden ||
			f.Case.Shape.Seqs > f.Original.Shape.Seqs || f.Case.Shape.SeqLen > f.Original.Shape.SeqLen) {
			t.Errorf("the minimal case is larger than the original: %+v vs %+v", f.Case.Shape, f.Original.Shape)
		}
	}
	t.Logf("%d cases (%d invariant, all agreeing) in %v", s.Cases, s.InvariantCases, s.Elapsed.Round(time.Millisecond))
}
