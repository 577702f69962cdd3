//go:build cuda

package scan

import (
	"context"
	"reflect"
	"testing"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// scanUnheld runs s with no holder but the host's: every step gathers its
// items on the host and calls the target's Run.
func scanUnheld(t *testing.T, s spec.ScanSpec) *Result {
	t.Helper()
	saved := holders
	holders = []func(target.Target, *target.Batch) (held, error){holdExec} // takes no GPU target
	defer func() { holders = saved }()
	r := run(t, s)
	if r.Resident {
		t.Fatal("the unheld scan held its batches")
	}
	return r
}

// A scan of a gemm or log-prob GPU target holds each draw's batch on the
// device and gives the Result of the unheld scan (Run per step): the same
// map, classes, differing steps and counts, and a certificate exactly when
// the unheld scan gives one; a drift model's map is its CPU twin's.
func TestScanGEMMHeld(t *testing.T) {
	needGPU(t)
	gemm := func(target string, to, k, n int, out spec.DType) spec.ScanSpec {
		return spec.ScanSpec{Target: target, To: to, Shape: spec.Shape{Hidden: k, N: n}, In: "bf16", Out: out,
			Dists: []spec.Dist{spec.DistNormal, spec.DistBoundary, spec.DistHeavy}, Seed: 1}
	}
	tests := []struct {
		name      string
		s         spec.ScanSpec
		certified bool
		twin      string // the CPU drift model whose map the scan must give
	}{
		{"cuda-gemm", gemm("cuda-gemm", 80, 64, 48, "bf16"), true, ""},
		{"split-K by M", gemm("cuda-drift-gemm-splitk-by-m", 100, 128, 16, "bf16"), false, "drift-gemm-splitk-by-m"},
		{"cuBLAS GemmEx", gemm("cublas-gemmex", 80, 256, 64, "bf16"), false, ""},
		{"cuBLAS GemmEx, rows off alignment", gemm("cublas-gemmex", 80, 100, 40, "bf16"), false, ""},
		{"cuBLAS Sgemm fp32 out", gemm("cublas-sgemm", 80, 96, 40, "fp32"), false, ""},
		{"cuda-logprob", spec.ScanSpec{Target: "cuda-logprob", To: 140, Shape: spec.Shape{Vocab: 300}, Out: "fp32", Seed: 1}, true, ""},
		{"log-prob rows132", spec.ScanSpec{Target: "cuda-drift-order-logprob-rows132", To: 140, Shape: spec.Shape{Vocab: 300}, Out: "fp32", Seed: 1}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held := run(t, tt.s)
			if !held.Resident {
				t.Fatal("the inputs did not stay on the device")
			}
			unheld := scanUnheld(t, tt.s)
			t.Logf("%s: held %v, unheld %v, map %s", tt.name, held.Elapsed, unheld.Elapsed, MapWords(held.Map))
			if (held.Certificate != nil) != (unheld.Certificate != nil) {
				t.Fatalf("certified %v held, %v unheld", held.Certificate != nil, unheld.Certificate != nil)
			}
			if tt.certified && held.Certificate == nil {
				t.Fatalf("not certified: %d differ, %+v", held.Differing, held.Diffs)
			}
			// the bulk check records rows that transitivity settles
			// without comparing them (scan/bulk.go): fewer rows compared
			// only where some differ
			if held.Batches != unheld.Batches || held.Differing != unheld.Differing || held.RowsCompared > unheld.RowsCompared ||
				held.Differing == 0 && held.RowsCompared != unheld.RowsCompared {
				t.Errorf("held: %d batches, %d rows compared, %d differ; unheld: %d, %d, %d", held.Batches, held.RowsCompared,
					held.Differing, unheld.Batches, unheld.RowsCompared, unheld.Differing)
			}
			if !reflect.DeepEqual(held.Diffs, unheld.Diffs) {
				t.Errorf("differing steps held %+v, unheld %+v", held.Diffs, unheld.Diffs)
			}
			if !reflect.DeepEqual(held.Map, unheld.Map) {
				t.Errorf("map held %s %q %+v, unheld %s %q %+v", held.Map.Kind, held.Map.Rule, held.Map.Classes,
					unheld.Map.Kind, unheld.Map.Rule, unheld.Map.Classes)
			}
			if tt.twin != "" {
				s := tt.s
				s.Target = tt.twin
				cpu := run(t, s)
				if held.Map.Rule != cpu.Map.Rule || cpu.Map.Rule == "" {
					t.Errorf("map %q, CPU twin %s %q", held.Map.Rule, tt.twin, cpu.Map.Rule)
				}
			}
		})
	}
}

// BenchmarkScanGPUCublas is the cuBLAS scan: cublas-gemmex bf16 at
// K = N = 4096 over M 1..256, three draws, X and W resident on the
// device. Reported: seconds per scan and rows compared per second; the
// loop to hold it against is scripts/gemm_scan.py 256 4096 4096 --draws 3.
func BenchmarkScanGPUCublas(b *testing.B) {
	needGPU(b)
	s := spec.ScanSpec{Target: "cublas-gemmex", To: 256, Shape: spec.Shape{Hidden: 4096, N: 4096}, In: "bf16", Out: "bf16",
		Dists: []spec.Dist{spec.DistNormal, spec.DistBoundary, spec.DistHeavy}, Seed: 1}
	var r *Result
	for b.Loop() {
		var err error
		if r, err = Run(context.Background(), s, Options{}); err != nil {
			b.Fatal(err)
		}
		if !r.Resident {
			b.Fatal("the inputs did not stay on the device")
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/scan")
	b.ReportMetric(float64(r.RowsCompared)/sec, "rows/s")
	b.ReportMetric(r.Elapsed.Seconds(), "s/last")
}
