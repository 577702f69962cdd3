package transformer

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCampaign: in a short campaign every control is found (drift models
// localised to their planted site, misuses flagged) and the invariant jobs
// give no finding. Shrinking is TestMinimize's.
func TestCampaign(t *testing.T) {
	s, err := Campaign{Duration: 10 * time.Second, Seed: 1, NoShrink: true}.Run(context.Background())
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
	if err := s.Err(); err != nil {
		t.Error(err)
	}
	var text strings.Builder
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(text.String(), "expected (negative control)"); n != len(s.Findings) || n == 0 {
		t.Errorf("text lists %d controls, the summary %d:\n%s", n, len(s.Findings), text.String())
	}
	for _, f := range s.Findings {
		t.Logf("%-8s after %3d cases, %v, localised and mapped (or shrunk) in %v (%d steps, %d layers, %d requests of <= %d tokens, hidden %d): %s",
			f.Kind, f.CasesBefore, time.Duration(f.Elapsed).Round(time.Millisecond), time.Duration(f.ToMinimal).Round(time.Millisecond),
			f.ShrinkSteps, f.Case.Shape.Rows, f.Case.Shape.Seqs, f.Case.Shape.SeqLen, f.Case.Shape.Hidden, f.Message[:min(len(f.Message), 200)])
		if f.Original != nil && (f.Case.Shape.Rows > f.Original.Shape.Rows || f.Case.Shape.Hidden > f.Original.Shape.Hidden ||
			f.Case.Shape.Seqs > f.Original.Shape.Seqs || f.Case.Shape.SeqLen > f.Original.Shape.SeqLen) {
			t.Errorf("the minimal case is larger than the original: %+v vs %+v", f.Case.Shape, f.Original.Shape)
		}
	}
	t.Logf("%d cases (%d invariant, all agreeing) in %v", s.Cases, s.InvariantCases, s.Elapsed.Round(time.Millisecond))
}

// TestMinimize shrinks a planted drift's case: the minimal case is no
// larger in any dimension, smaller in some, and still shows the drift at the
// planted site.
func TestMinimize(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(7000); seed < 7040; seed++ {
		c := (Gen{}).Case(seed)
		c.Relation = "path_parity"
		c, err := Plant(c, "gemm_splitk_by_m", Site{0, OpMLPUp})
		if err != nil {
			t.Fatal(err)
		}
		f, err := Check(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if f == nil {
			continue
		}
		g, err := minimal(ctx, f, c, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		o, m := c.Shape, g.Case.Shape
		if g.ShrinkSteps == 0 || g.Original == nil {
			t.Fatalf("no shrink step from %+v", o)
		}
		if m.Rows > o.Rows || m.Hidden > o.Hidden || m.Seqs > o.Seqs || m.SeqLen > o.SeqLen || m.N > o.N || m.Vocab > o.Vocab {
			t.Fatalf("minimal %+v is larger than %+v", m, o)
		}
		if !strings.Contains(g.Message, "first divergence: L0.mlp_up ") {
			t.Fatalf("the minimal case's finding moved: %s", g.Message)
		}
		t.Logf("%d steps in %v: %+v -> %+v", g.ShrinkSteps, time.Duration(g.ToMinimal).Round(time.Millisecond), o, m)
		return
	}
	t.Fatal("no planted finding to shrink in 40 seeds")
}
