package main

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

// TestKnownAcrossDTypes: --known matches the same drift (verdict.SameDrift:
// spec.Identity and a drift map that splits the rows alike), so a bug filed
// from a bf16 case is known when the run sees it in fp16, with another
// seed, shape and sample of rows; another relation on the same targets is
// not, and neither is another drift on the same target and relation.
func TestKnownAcrossDTypes(t *testing.T) {
	dir := t.TempDir()
	d, err := corpus.OpenDir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	c := spec.Case{Version: 1, Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance, Targets: []string{"drift-rmsnorm-te-mod32"},
		Shape: spec.Shape{Rows: 32, Hidden: 64}, In: spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 1, GenVersion: 1,
		Rel: spec.RelParams{Batch: 1}}
	mod32 := func(values ...int) *spec.DriftMap {
		m := &spec.DriftMap{Dim: "rows", Kind: "periodic", Rule: "rows % 32 == 0 -> B, otherwise -> A",
			Classes: []spec.DriftClass{{Label: "A", Digest: "1"}, {Label: "B", Digest: "2"}}}
		for _, v := range values {
			m.Values = append(m.Values, v)
			k := 0
			if v%32 == 0 {
				k = 1
			}
			m.Classes[k].Values = append(m.Classes[k].Values, v)
		}
		return m
	}
	filed := spec.Finding{Case: c, Kind: spec.KindMismatch, Relation: c.Relation, TargetA: c.Targets[0],
		DriftMap: mod32(1, 2, 31, 32, 33, 64, 65)}
	if _, _, err := d.Put(corpus.NewFile(c, &filed, spec.Env{}, "test")); err != nil {
		t.Fatal(err)
	}
	k, err := verdict.LoadKnown(context.Background(), []string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := filed
	seen.Case.In, seen.Case.Out, seen.Case.Seed, seen.Case.Shape.Rows = spec.FP16, spec.FP16, 9, 64
	seen.DriftMap = mod32(1, 3, 32, 64, 96, 97)
	if _, ok := k.Match(seen); !ok {
		t.Error("the same bug in fp16 is not known")
	}
	mod7 := seen
	mod7.DriftMap = &spec.DriftMap{Dim: "rows", Kind: "periodic", Rule: "rows % 7 == 0 -> B, otherwise -> A",
		Values: []int{1, 7, 32, 64}, Classes: []spec.DriftClass{{Label: "A", Values: []int{1, 32, 64}}, {Label: "B", Values: []int{7}}}}
	if at, ok := k.Match(mod7); ok {
		t.Errorf("a rows %% 7 drift on the target is known as %s, a rows %% 32 drift", at)
	}
	other := seen
	other.Relation = spec.RelPadding
	if _, ok := k.Match(other); ok {
		t.Error("another relation on the same target is known")
	}
}
