package relate

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// instantTarget generates lazy batches and computes nothing: its outputs
// are device outputs that compare equal at once. Check's own host work on
// a lazy case is what is left.
type instantTarget struct{}

func (instantTarget) Info() target.Info {
	return target.Info{Name: "test-instant", Op: spec.OpRMSNorm, Invariant: true}
}
func (instantTarget) Generates(*target.Source) bool { return true }
func (instantTarget) Run(_ context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	sel := b.Rows0(rows)
	return &target.Output{Rows: sel, Cols: b.Cols(), DType: b.OutDType(), Device: instantOut{}, TapCols: 2, DeviceTaps: instantOut{}}, nil
}

type instantOut struct{}

func (instantOut) CompareRows(target.DeviceOutput, []int, []int, oracle.DType) ([]target.RowDiff, error) {
	return nil, nil
}
func (instantOut) Fetch(pos []int) ([]float32, error) { return make([]float32, 0), nil }
func (instantOut) Release()                           {}

// BenchmarkLazyCheckHost is the host's share of a GPU campaign's check
// (BenchmarkCheckCampaign in package gpu): fuzz.Check of the 2274 x 4096
// batch-invariance case on a target that generates and computes nothing.
//
//	go test -run '^$' -bench LazyCheckHost ./fuzz/
func BenchmarkLazyCheckHost(b *testing.B) {
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
		Relation: spec.RelBatchInvariance, Targets: []string{"test-instant"}, In: spec.BF16, Out: spec.BF16,
		Dist: spec.DistNormal, Eps: 1e-6, Shape: spec.Shape{Rows: 2274, Hidden: 4096},
		Rel: spec.RelParams{Row: 5, Batch: 928, Position: 100}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.Seed, c.Rel.PermSeed = uint64(i), uint64(i)
		if f, err := Check(context.Background(), c, instantTarget{}); err != nil || f != nil {
			b.Fatal(err, f)
		}
	}
}
