package fuzz

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// toySource is a composite source for tests: op "toy"; a case fails when
// Shape.Rows >= limit, with a mismatch whose Site is layer Rows % 2 and
// op "mlp" (the planted site: layer Shape.Heads, op "mlp"); Shrink steps
// Rows down by one.
func toySource(name string, limit int, calls *int) *Source {
	return &Source{Name: name, Op: "toy",
		Check: func(_ context.Context, c spec.Case) (*spec.Finding, error) {
			*calls++
			if c.Shape.Rows < limit {
				return nil, nil
			}
			return &spec.Finding{Case: c, Kind: spec.KindMismatch, Relation: c.Relation,
				Site: &spec.Site{Layer: c.Shape.Rows % 2, Op: "mlp"}, Message: name}, nil
		},
		Shrink: func(c spec.Case) [][]spec.Case {
			if c.Shape.Rows <= 1 {
				return nil
			}
			k := c
			k.Shape.Rows--
			return [][]spec.Case{{k}}
		},
		Planted: func(c spec.Case) *spec.Site { return &spec.Site{Layer: c.Shape.Heads, Op: "mlp"} },
	}
}

// TestCheckCompositeUsesPassedSource: fuzz.Check hands a composite case to
// the source passed in, and to none other; without one it is an error (no
// hidden registry); a single-op case ignores the sources passed with it.
func TestCheckCompositeUsesPassedSource(t *testing.T) {
	ctx := context.Background()
	c := spec.Case{Version: 1, Op: "toy", Relation: "toy", Shape: spec.Shape{Rows: 5}}
	var a, b int
	srcA, srcB := toySource("a", 3, &a), toySource("b", 9, &b)
	f, err := Check(ctx, c, srcA)
	if err != nil || f == nil || f.Message != "a" || a != 1 || b != 0 {
		t.Fatalf("with source a: finding %+v, error %v; calls a=%d b=%d", f, err, a, b)
	}
	if f, err := Check(ctx, c, srcB); err != nil || f != nil || b != 1 {
		t.Fatalf("with source b (rows 5 < 9 holds): finding %+v, error %v; calls b=%d", f, err, b)
	}
	if _, err := Check(ctx, c); err == nil || !strings.Contains(err.Error(), "fuzz.Source") {
		t.Fatalf("without a source: error %v, want one asking for the fuzz.Source", err)
	}
	other := &Source{Name: "other", Op: "other", Check: srcA.Check}
	if _, err := Check(ctx, c, other); err == nil {
		t.Fatal("a source of another op checked the case")
	}
	k := spec.Case{Version: 1, GenVersion: 1, Op: spec.OpRMSNorm, Relation: spec.RelDeterminism, Targets: []string{"oracle-rmsnorm"},
		Shape: spec.Shape{Rows: 3, Hidden: 16}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistNormal, Seed: 1}
	if f, err := Check(ctx, k, srcA); err != nil || f != nil {
		t.Fatalf("single-op case with a source passed: finding %+v, error %v", f, err)
	}
	a = 0
	g, _, err := Minimize(ctx, f, MinimizeOptions{Targets: []target.Target{srcA}})
	if err != nil {
		t.Fatal(err)
	}
	// Shrinking keeps the site (layer 5 % 2 = 1): rows 5 -> 4 would move it
	// to layer 0, so 5 is minimal for the default Same; a is called.
	if g.Case.Shape.Rows != 5 || a == 0 || g.Site == nil || g.Site.Layer != 1 {
		t.Fatalf("minimal %+v, site %+v, calls %d", g.Case.Shape, g.Site, a)
	}
	g, _, err = Minimize(ctx, f, MinimizeOptions{Targets: []target.Target{srcA},
		Same: func(f, g *spec.Finding) bool { return g.Kind == f.Kind }})
	if err != nil || g.Case.Shape.Rows != 3 || g.ShrinkSteps != 2 || g.Original == nil {
		t.Fatalf("minimal by kind: %+v, error %v", g, err)
	}
}

// TestCampaignSources: a campaign runs a source's jobs as pairs: a control
// found at its planted site is Expected, one found elsewhere is not, a
// control owed cases runs them past MaxCases, and the job statistics carry
// the jobs' names.
func TestCampaignSources(t *testing.T) {
	var calls int
	src := toySource("toy", 4, &calls)
	draw := func(rows, planted int) func(uint64) (spec.Case, bool) {
		return func(seed uint64) (spec.Case, bool) {
			return spec.Case{Version: 1, Op: "toy", Relation: "toy", Seed: seed,
				Shape: spec.Shape{Rows: rows, Heads: planted}}, seed%2 == 0
		}
	}
	src.Jobs = []Job{
		{Name: "toy/invariant", Relation: "toy", Invariant: true, Draw: draw(2, 0)},
		{Name: "toy/at-site", Relation: "toy", Expect: spec.KindMismatch, MinCases: 3, Draw: draw(5, 1)},
		{Name: "toy/elsewhere", Relation: "toy", Expect: spec.KindMismatch, MinCases: 3, Draw: draw(6, 1)},
	}
	c := &Campaign{Duration: 5 * time.Second, MaxCases: 1, Workers: 1, Sources: []*Source{src}, Targets: []string{"toy"}}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Cases != 3 || len(res.Findings) != 2 {
		t.Fatalf("%d cases, %d findings (want 3: one in time, two owed to the controls; 2 findings)", res.Cases, len(res.Findings))
	}
	expected := map[int]bool{}
	for _, f := range res.Findings {
		expected[f.Case.Shape.Rows] = f.Expected
		if f.Site == nil {
			t.Errorf("finding without a site: %+v", f)
		}
	}
	// Planted at layer 1: rows 5 diverge there, rows 6 at layer 0.
	if len(expected) != 2 || !expected[5] || expected[6] {
		t.Errorf("Expected by rows: %v, want 5: true, 6: false", expected)
	}
	var names []string
	for _, s := range res.Targets {
		names = append(names, s.Target)
		if (s.Target == "toy/invariant") != s.Invariant || s.Op != "toy" {
			t.Errorf("statistics %+v", s)
		}
		if s.Target != "toy/invariant" && (s.Findings != 1 || s.Cases != 1) {
			t.Errorf("control %s: %d cases, %d findings; want 1 and 1", s.Target, s.Cases, s.Findings)
		}
	}
	if strings.Join(names, " ") != "toy/invariant toy/at-site toy/elsewhere" {
		t.Errorf("job statistics %v", names)
	}
}
