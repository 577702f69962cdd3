package scan

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// benchScan is the scan both benchmarks measure: rmsnorm rows 1..128 at
// hidden 1024, bf16, one normal draw.
var benchScan = spec.ScanSpec{Target: "oracle-rmsnorm", To: 128, Shape: spec.Shape{Hidden: 1024},
	Dists: []spec.Dist{spec.DistNormal}, Seed: 1}

// loopScan runs scan s once per iteration of b's loop (b.Loop), failing
// at an error or at a result that check (nil: none) refuses, and returns
// the last result.
func loopScan(b *testing.B, s spec.ScanSpec, check func(r *Result) error) *Result {
	b.Helper()
	var r *Result
	for b.Loop() {
		var err error
		if r, err = Run(context.Background(), s, Options{}); err != nil {
			b.Fatal(err)
		}
		if check == nil {
			continue
		}
		if err := check(r); err != nil {
			b.Fatal(err)
		}
	}
	return r
}

// rowsRun is the number of rows a scan of items 1..n computes: every batch
// 1..n, the reference batch and each item alone.
func rowsRun(n int) int { return n*(n+1)/2 + 2*n }

// BenchmarkScanCPU is the scan rate of the CPU oracle: rows computed per
// second (every batch of the range, the reference batch and each row
// alone) and rows compared per second.
func BenchmarkScanCPU(b *testing.B) {
	r := loopScan(b, benchScan, nil)
	s := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(rowsRun(benchScan.To))/s, "rows/s")
	b.ReportMetric(float64(r.RowsCompared)/s, "compared/s")
}

// BenchmarkOracleBare is the same batches through the oracle alone: no
// inputs generated, nothing compared (the scan's floor).
func BenchmarkOracleBare(b *testing.B) {
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
		Shape: spec.Shape{Rows: benchScan.To, Hidden: 1024}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistNormal, Seed: 1}
	big, err := inputs.Of(c)
	if err != nil {
		b.Fatal(err)
	}
	t, err := target.Lookup("oracle-rmsnorm")
	if err != nil {
		b.Fatal(err)
	}
	h := &hostHeld{t: t, b: big}
	ctx := context.Background()
	for b.Loop() {
		for v := 1; v <= benchScan.To; v++ {
			if _, err := h.run(ctx, spec.Iota(v)); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := h.run(ctx, spec.Iota(benchScan.To)); err != nil {
			b.Fatal(err)
		}
		if _, err := h.alone(ctx, benchScan.To); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rowsRun(benchScan.To))/(b.Elapsed().Seconds()/float64(b.N)), "rows/s")
}
