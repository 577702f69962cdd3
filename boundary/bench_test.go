package boundary_test

import (
	"testing"

	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// BenchmarkRMSNormRows nudges 64 RMSNorm rows of hidden 4096 that share
// their weights, on one goroutine: "row" with RMSNormRow on each row
// (the probes found again every row), "batch" with one RMSNormRows (the
// probes found once), for bf16 and fp32 inputs (fp32 counts mantissas in
// a map); "row" is the bound "batch" is read against. ns/row each.
//
//	go test -run '^$' -bench RMSNormRows ./boundary/
func BenchmarkRMSNormRows(b *testing.B) {
	for _, in := range []spec.DType{spec.BF16, spec.FP32} {
		c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm, In: in, Out: spec.BF16,
			Dist: spec.DistNormal, Seed: 5, Eps: 1e-6, Shape: spec.Shape{Rows: 64, Hidden: 4096}}
		batch, err := inputs.Of(c)
		if err != nil {
			b.Fatal(err)
		}
		r := batch.Input.(*oracle.RMSNormInput)
		dt, out := batch.In, oracle.BF16
		s := target.OracleRMSNormSchedule
		x := make([]float32, len(r.X))
		b.Run(string(in)+"/row", func(b *testing.B) {
			for b.Loop() {
				copy(x, r.X)
				for i := range r.Rows {
					boundary.RMSNormRow(x[i*r.Hidden:(i+1)*r.Hidden], r.W, r.Eps, dt, out, s, i%2 == 1)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*r.Rows), "ns/row")
		})
		b.Run(string(in)+"/batch", func(b *testing.B) {
			for b.Loop() {
				copy(x, r.X)
				rows := boundary.NewRMSNormRows(r.W, r.Eps, dt, out, s)
				for i := range r.Rows {
					rows.Nudge(x[i*r.Hidden:(i+1)*r.Hidden], i%2 == 1)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*r.Rows), "ns/row")
		})
	}
}
