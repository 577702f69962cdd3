package inputs

import (
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/values"
)

// BenchmarkGen generates rows of 4096 bf16 values of every distribution
// with generator version 1 (fillRow) and version 2 (values), one row
// key per iteration, on one goroutine, and reports ns/value: version 1 is
// the bound version 2 is measured against in the same run.
//
//	go test -run - -bench Gen -benchtime 20000x ./fuzz/
func BenchmarkGen(b *testing.B) {
	const n = 4096
	dists := []spec.Dist{spec.DistNormal, spec.DistHeavy, spec.DistOutlier, spec.DistConstant,
		spec.DistSignedZero, spec.DistSubnormal, spec.DistNearOverflow, spec.DistTies}
	dst := make([]float32, n)
	for _, d := range dists {
		b.Run("v1/"+string(d), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if err := fillRow(dst, d, oracle.BF16, 1, newRowRNG(1, tensorX, uint64(i))); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/value")
		})
		b.Run("v2/"+string(d), func(b *testing.B) {
			t := values.Tensor{Seed: 1, ID: tensorX, Dist: d, DType: oracle.BF16, Scale: 1}
			for i := 0; b.Loop(); i++ {
				if err := t.Row(dst, uint64(i)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/value")
		})
	}
}

// BenchmarkOfRMSNorm makes the batch of an rmsnorm case of 8192 rows x
// 4096 bf16 on the host (Of, on GOMAXPROCS goroutines) for the normal and
// the boundary draw: the host's share of a draw that an adapter or device
// does not make itself (the boundary draw of scan --exec, whose nudges
// need the oracle's schedule).
//
//	go test -run - -bench OfRMSNorm -benchtime 3x ./fuzz/inputs/
func BenchmarkOfRMSNorm(b *testing.B) {
	for _, d := range []spec.Dist{spec.DistNormal, spec.DistBoundary} {
		b.Run(string(d), func(b *testing.B) {
			c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm, In: spec.BF16, Out: spec.BF16,
				Dist: d, Seed: 1, Eps: 1e-6, Shape: spec.Shape{Rows: 8192, Hidden: 4096}}
			for b.Loop() {
				if _, err := Of(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
