//go:build cuda

package scan

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// scanUnheld runs s with no holder but the host's: every step gathers its
// items on the host (made there: no case holder) and calls the target's
// Run.
func scanUnheld(t *testing.T, s spec.ScanSpec) *Result {
	t.Helper()
	saved, savedCase := holders, caseHolders
	holders = []func(target.Target, *target.Batch) (held, error){holdExec} // takes no GPU target
	caseHolders = nil
	defer func() { holders, caseHolders = saved, savedCase }()
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

// A gemm case held with X and W made on the device (holdGEMMCase) gives
// the outputs of the same case made on the host (inputs.Of) and
// uploaded (gpu.HoldGEMM), bit for bit, for every prefix the scan runs
// and the rows alone: the device made the host's X and W (a boundary
// case's rows nudged the same). cublas-sgemm of a bf16 case (its inputs
// widened to fp32) is left to the host.
func TestHoldGEMMCase(t *testing.T) {
	needGPU(t)
	for _, name := range []string{"cuda-gemm", "cublas-gemmex", "cuda-drift-gemm-splitk-by-m"} {
		tg, err := target.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, dist := range []spec.Dist{spec.DistNormal, spec.DistBoundary, spec.DistHeavy, spec.DistTies} {
			c := spec.Case{Version: spec.CaseVersion, GenVersion: 2, Op: spec.OpGEMM, Relation: spec.RelBatchInvariance,
				Targets: []string{name}, Shape: spec.Shape{Rows: 70, Hidden: 136, N: 72}, In: "bf16", Out: "bf16", Dist: dist, Seed: 5}
			dev, b, err := holdGEMMCase(tg, c, nil)
			if err != nil || dev == nil {
				t.Fatalf("%s %s: held %v, %v", name, dist, dev != nil, err)
			}
			if b.Rows() != 70 || b.Cols() != 72 || b.RowsPerItem() != 1 {
				t.Errorf("%s %s: batch of %d rows x %d, %d an item", name, dist, b.Rows(), b.Cols(), b.RowsPerItem())
			}
			hb, err := inputs.Of(c)
			if err != nil {
				t.Fatal(err)
			}
			host, err := deviceHold(gpu.HoldGEMM(tg, hb))
			if err != nil {
				t.Fatal(err)
			}
			for _, ids := range [][]int{spec.Iota(70), spec.Iota(33), {5, 3, 69}} {
				if got, want := heldValues(t, dev, ids), heldValues(t, host, ids); !slices.Equal(got, want) {
					t.Errorf("%s %s: batch of %d rows: the device-made case's output differs from the host-made one's", name, dist, len(ids))
				}
			}
			got, err := dev.alone(context.Background(), 70)
			if err == nil {
				err = got.ToHost()
			}
			want, err2 := host.alone(context.Background(), 70)
			if err2 == nil {
				err2 = want.ToHost()
			}
			if err != nil || err2 != nil {
				t.Fatal(err, err2)
			}
			if !slices.Equal(bitsOf(got.Values), bitsOf(want.Values)) {
				t.Errorf("%s %s: rows alone differ", name, dist)
			}
			got.Release()
			want.Release()
			dev.release()
			host.release()
		}
	}
	sg, err := target.Lookup("cublas-sgemm")
	if err != nil {
		t.Fatal(err)
	}
	c := spec.Case{Version: spec.CaseVersion, GenVersion: 2, Op: spec.OpGEMM, Relation: spec.RelBatchInvariance,
		Shape: spec.Shape{Rows: 8, Hidden: 16, N: 8}, In: "bf16", Out: "fp32", Dist: spec.DistNormal, Seed: 5}
	if h, b, err := holdGEMMCase(sg, c, nil); h != nil || b != nil || err != nil {
		t.Errorf("cublas-sgemm of a bf16 case: held %v, batch %v, %v; want it left to the host", h != nil, b != nil, err)
	}
}

// bitsOf is the bits of vs (a NaN equals itself).
func bitsOf(vs []float32) []uint32 {
	b := make([]uint32, len(vs))
	for i, v := range vs {
		b[i] = math.Float32bits(v)
	}
	return b
}

// heldValues runs the batch of held items ids of h and returns its
// output's values' bits on the host.
func heldValues(t *testing.T, h held, ids []int) []uint32 {
	t.Helper()
	o, err := h.run(context.Background(), ids)
	if err == nil {
		err = o.ToHost()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer o.Release()
	return bitsOf(o.Values)
}

// BenchmarkScanGPUCublas is the cuBLAS scan: cublas-gemmex bf16 at
// K = N = 4096 over M 1..256, three draws, X and W resident on the
// device. Reported: seconds per scan and rows compared per second; the
// loop to hold it against is scripts/gemm_scan.py 256 4096 4096 --draws 3.
func BenchmarkScanGPUCublas(b *testing.B) {
	needGPU(b)
	s := spec.ScanSpec{Target: "cublas-gemmex", To: 256, Shape: spec.Shape{Hidden: 4096, N: 4096}, In: "bf16", Out: "bf16",
		Dists: []spec.Dist{spec.DistNormal, spec.DistBoundary, spec.DistHeavy}, Seed: 1}
	r := loopScan(b, s, func(r *Result) error {
		if !r.Resident {
			return errors.New("the inputs did not stay on the device")
		}
		return nil
	})
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/scan")
	b.ReportMetric(float64(r.RowsCompared)/sec, "rows/s")
	b.ReportMetric(r.Elapsed.Seconds(), "s/last")
}
