package main

import (
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
)

// TestKnownAcrossDTypes: --known matches by spec.Identity, so a bug filed
// from a bf16 case is known when the run sees it in fp16, with another
// seed and shape; another relation on the same targets is not.
func TestKnownAcrossDTypes(t *testing.T) {
	dir := t.TempDir()
	d, err := corpus.OpenDir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	c := spec.Case{Version: 1, Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance, Targets: []string{"drift-rmsnorm-te-mod32"},
		Shape: spec.Shape{Rows: 32, Hidden: 64}, In: spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 1, GenVersion: 1,
		Rel: spec.RelParams{Batch: 1}}
	filed := spec.Finding{Case: c, Kind: spec.KindMismatch, Relation: c.Relation, TargetA: c.Targets[0]}
	if _, _, err := d.Put(corpus.NewFile(c, &filed, spec.Env{}, "test")); err != nil {
		t.Fatal(err)
	}
	k, err := loadKnown(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := filed
	seen.Case.In, seen.Case.Out, seen.Case.Seed, seen.Case.Shape.Rows = spec.FP16, spec.FP16, 9, 64
	if _, ok := k.match(seen); !ok {
		t.Error("the same bug in fp16 is not known")
	}
	other := seen
	other.Relation = spec.RelPadding
	if _, ok := k.match(other); ok {
		t.Error("another relation on the same target is known")
	}
}
