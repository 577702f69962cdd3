package mykernel

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/fuzztest"
	"github.com/bitparity/bitparity/spec"
)

// FuzzMyKernel is all a team adds to its repository:
//
//	go test -fuzz=FuzzMyKernel -fuzztime 60s ./mykernel
//
// Plain go test runs the seed corpus (and any failures found before,
// under testdata/fuzz/FuzzMyKernel).
func FuzzMyKernel(f *testing.F) {
	fuzztest.Fuzz(f, fuzztest.Options{
		Target:    RMSNorm{Lanes: 4},
		Relations: []string{spec.RelBatchInvariance, spec.RelPadding, spec.RelOracleParity, spec.RelDeterminism},
	})
}

// TestLaneSwitchIsFound is the negative control: the same kernel choosing 4
// lanes for batches of a multiple of 32 rows and 2 otherwise is not batch
// invariant, and a fixed budget of generated cases finds it and shrinks it.
func TestLaneSwitchIsFound(t *testing.T) {
	k := RMSNorm{Lanes: 2, LanesFor: func(rows int) int {
		if rows%32 == 0 {
			return 4
		}
		return 2
	}}
	f, err := fuzztest.Search(context.Background(), fuzztest.Options{Target: k,
		Relations: []string{spec.RelBatchInvariance}, CorpusDir: t.TempDir()}, 1, 64)
	if err != nil {
		t.Fatal(err)
	}
	if f == nil {
		t.Fatal("the lane switch at rows % 32 == 0 was not found")
	}
	t.Logf("found %s on %s: %d ulps at row %d col %d, minimal shape %+v, batch %d",
		f.Relation, f.TargetA, f.ULPs, f.Row, f.Col, f.Case.Shape, f.Case.Rel.Batch)
}
