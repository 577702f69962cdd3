package gen

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
)

// TestSensitiveShare: Case, Residue and Spread draw spec.DistSensitive
// exactly where Sensitive's rule says (an op with a family at a row of at
// least SensitiveMinCols, not
// determinism, at most SensitiveRows keyed items, one seed in
// SensitiveEvery of the boundary draws), never for an op without a family
// (attn_prefill), and for about 1/SensitiveEvery of the small boundary
// draws of the ops with one.
func TestSensitiveShare(t *testing.T) {
	const draws = 500
	var small, sensitive int
	check := func(how string, c spec.Case) {
		t.Helper()
		k, _ := all.Case(c.Op)
		cols, family := k.FamilyCols(c.Shape)
		eligible := family && cols >= SensitiveMinCols && c.Relation != spec.RelDeterminism && max(c.BatchRows(), c.Rel.Batch) <= SensitiveRows
		if eligible != SensitiveFits(c) {
			t.Fatalf("%s: SensitiveFits %v, want %v: %+v", how, !eligible, eligible, c)
		}
		switch {
		case c.Dist == spec.DistSensitive && (!eligible || (c.Seed/64)%SensitiveEvery != 0):
			t.Fatalf("%s: %s %s drawn sensitive outside the rule: %+v", how, c.Op, c.Relation, c)
		case c.Dist == spec.DistBoundary && eligible && (c.Seed/64)%SensitiveEvery == 0:
			t.Fatalf("%s: %s %s left boundary where the rule draws sensitive: %+v", how, c.Op, c.Relation, c)
		case c.Dist == spec.DistSensitive && c.Draw != 0:
			t.Fatalf("%s: a sensitive draw %d, want 0 (the first of a chain)", how, c.Draw)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		if eligible && (c.Dist == spec.DistBoundary || c.Dist == spec.DistSensitive) {
			small++
			if c.Dist == spec.DistSensitive {
				sensitive++
			}
		}
	}
	for _, p := range pairs() {
		r := rand.New(rand.NewSource(seedOr(t, 1)))
		for range draws {
			c := Case(r, p.op, p.rel)
			check("Case", c)
			check("Residue", Residue(c))
			Spread(r, &c, 64)
			check("Spread", c)
		}
	}
	share := float64(sensitive) / float64(small)
	t.Logf("%d of %d small boundary draws of ops with a family sensitive (%.1f%%)", sensitive, small, 100*share)
	if want := 1 / float64(SensitiveEvery); share < want*0.8 || share > want*1.2 {
		t.Errorf("sensitive share %.3f of the eligible draws, want about %.3f", share, want)
	}
}

// TestShrinkKeepsSensitiveRows: shrinking never makes a sensitive case
// whose row is shorter than SensitiveMinCols (the draw would index out
// of range), and still shrinks a normal one to a row of 1.
func TestShrinkKeepsSensitiveRows(t *testing.T) {
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
		Relation: spec.RelOracleParity, Shape: spec.Shape{Rows: 1, Hidden: 8}, In: spec.BF16, Out: spec.BF16,
		Eps: 1e-6, Dist: spec.DistSensitive}
	short := false
	for _, n := range Simpler(c) {
		if n.Dist == spec.DistSensitive && n.Shape.Hidden < SensitiveMinCols {
			t.Errorf("a sensitive candidate of hidden %d", n.Shape.Hidden)
		}
		short = short || n.Shape.Hidden < SensitiveMinCols
	}
	if short {
		t.Errorf("a shorter row reached through another simplification")
	}
	c.Dist = spec.DistNormal
	if !slices.ContainsFunc(Simpler(c), func(n spec.Case) bool { return n.Shape.Hidden == 1 }) {
		t.Errorf("a normal case no longer shrinks to hidden 1")
	}
}
