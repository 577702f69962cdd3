//go:build cuda

package scan

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

func needGPU(t testing.TB) {
	t.Helper()
	if err := gpu.Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
}

// cuda-rmsnorm is certified with its inputs resident, and the GPU drift
// models give the maps of their CPU twins, every value swept.
func TestScanGPU(t *testing.T) {
	needGPU(t)
	tests := []struct {
		name string
		s    spec.ScanSpec
		rule string // empty: certified
	}{
		{"cuda-rmsnorm certified", spec.ScanSpec{Target: "cuda-rmsnorm", To: 1024, Shape: spec.Shape{Hidden: 4096},
			Dists: []spec.Dist{spec.DistNormal, spec.DistBoundary, spec.DistHeavy}}, ""},
		{"TE rows % 32", spec.ScanSpec{Target: "cuda-drift-rmsnorm-te-mod32", To: 1024, Shape: spec.Shape{Hidden: 4096}},
			"rows % 32 == 0 -> B, otherwise -> A"},
		{"vLLM 256", spec.ScanSpec{Target: "cuda-drift-rmsnorm-vllm-256", To: 1024, Shape: spec.Shape{Hidden: 4096}},
			"rows <= 255 -> A, rows >= 256 -> B"},
		{"cuda-rmsnorm position", spec.ScanSpec{Target: "cuda-rmsnorm", Dim: spec.ScanPosition, To: 300, Watch: 7, Shape: spec.Shape{Hidden: 4096}}, ""},
		{"TE padded", spec.ScanSpec{Target: "cuda-drift-rmsnorm-te-mod32", Dim: spec.ScanPad, Real: 5, From: 5, To: 300,
			Shape: spec.Shape{Hidden: 4096}}, "pad % 32 == 0 -> B, otherwise -> A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(context.Background(), tt.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Resident {
				t.Error("the inputs did not stay on the device")
			}
			t.Logf("%s: %d rows compared in %d batches, %v, map %s", tt.name, r.RowsCompared, r.Batches, r.Elapsed, MapWords(r.Map))
			if tt.rule == "" {
				if r.Certificate == nil {
					t.Fatalf("not certified: %d differ, first %+v", r.Differing, r.Diffs[0])
				}
				return
			}
			if r.Certificate != nil || r.Map.Rule != tt.rule {
				t.Errorf("map %s %q, want %q", r.Map.Kind, r.Map.Rule, tt.rule)
			}
		})
	}
}

// The same scan on the GPU drift model and on its CPU twin gives the same
// classes: the resident path computes what the host path does.
func TestScanGPUMatchesCPU(t *testing.T) {
	needGPU(t)
	s := spec.ScanSpec{To: 200, Shape: spec.Shape{Hidden: 512}}
	var maps [2]*spec.DriftMap
	for i, name := range []string{"cuda-drift-rmsnorm-te-mod32", "drift-rmsnorm-te-mod32"} {
		s.Target = name
		r, err := Run(context.Background(), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		maps[i] = r.Map
	}
	if maps[0].Rule != maps[1].Rule || len(maps[0].Classes) != len(maps[1].Classes) {
		t.Fatalf("GPU map %q, CPU map %q", maps[0].Rule, maps[1].Rule)
	}
	for i := range maps[0].Classes {
		if len(maps[0].Classes[i].Values) != len(maps[1].Classes[i].Values) {
			t.Errorf("class %s: %d values on the GPU, %d on the CPU", maps[0].Classes[i].Label,
				len(maps[0].Classes[i].Values), len(maps[1].Classes[i].Values))
		}
	}
}

// perStepAndBulk runs scan s step by step, then with the bulk check of
// its prefix steps, failing the test on an error.
func perStepAndBulk(t *testing.T, s spec.ScanSpec) (perStep, bulk *Result) {
	t.Helper()
	perStep, err := Run(context.Background(), s, Options{perStep: true})
	if err != nil {
		t.Fatal(err)
	}
	if bulk, err = Run(context.Background(), s, Options{}); err != nil {
		t.Fatal(err)
	}
	return perStep, bulk
}

// The bulk check of the prefix steps (gpu.Held.CheckPrefixes) gives the
// per-step path's results: the same maps, diffs and batches, and the same
// certificate; rows whose difference from the reference batch transitivity
// settles are recorded without being compared, so RowsCompared may only
// be lower, and is equal where nothing differs.
func TestScanGPUBulkMatchesPerStep(t *testing.T) {
	needGPU(t)
	b, err := inputs.Of(spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
		Shape: spec.Shape{Rows: 100, Hidden: 256}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistNormal, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.Lookup("cuda-rmsnorm")
	if err != nil {
		t.Fatal(err)
	}
	h, err := hold(tg, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h.(prefixChecker); !ok {
		t.Errorf("cuda-rmsnorm's held batch (%T) has no bulk check", h)
	}
	h.release()
	three := []spec.Dist{spec.DistNormal, spec.DistBoundary, spec.DistHeavy}
	for _, s := range []spec.ScanSpec{
		{Target: "cuda-rmsnorm", To: 1024, Shape: spec.Shape{Hidden: 4096}, Dists: three},
		{Target: "cuda-drift-rmsnorm-te-mod32", To: 700, Shape: spec.Shape{Hidden: 1024}, Dists: three},
		{Target: "cuda-drift-rmsnorm-vllm-256", To: 700, Shape: spec.Shape{Hidden: 1024}, Dists: three},
		{Target: "cuda-drift-rmsnorm-te-mod32", From: 100, To: 300, Shape: spec.Shape{Hidden: 4096}, NoTaps: true},
	} {
		t.Run(s.Target, func(t *testing.T) {
			want, got := perStepAndBulk(t, s)
			t.Logf("%s: bulk %v, per step %v; map %s", s.Target, got.Elapsed, want.Elapsed, MapWords(got.Map))
			if !reflect.DeepEqual(got.Map, want.Map) {
				t.Errorf("map %s %q, per step %s %q", got.Map.Kind, got.Map.Rule, want.Map.Kind, want.Map.Rule)
			}
			if !reflect.DeepEqual(got.Diffs, want.Diffs) {
				t.Errorf("%d diffs, per step %d; first differing: %+v", len(got.Diffs), len(want.Diffs), firstOther(got.Diffs, want.Diffs))
			}
			if got.Differing != want.Differing || got.Batches != want.Batches || got.RowsCompared > want.RowsCompared ||
				got.Differing == 0 && got.RowsCompared != want.RowsCompared {
				t.Errorf("differing %d, batches %d, rows compared %d; per step %d, %d, %d",
					got.Differing, got.Batches, got.RowsCompared, want.Differing, want.Batches, want.RowsCompared)
			}
			if (got.Certificate == nil) != (want.Certificate == nil) {
				t.Errorf("certified %v, per step %v", got.Certificate != nil, want.Certificate != nil)
			}
		})
	}
}

// BenchmarkScanGPURMSNorm is the scan: cuda-rmsnorm at hidden 4096
// bf16, rows 1..8192, three draws, every row of every batch compared with
// the row alone and in the 8192-row batch. Reported: seconds per scan,
// rows computed per second, and the bytes the kernels and checks move
// (TB/s): per step of v rows the kernel reads and writes v rows (4vH
// bytes in bf16); from 64 rows on the bulk check reads the output once
// (2vH), below 64 each of the per-step path's two compares reads two sides
// of v rows (4vH each); plus the references (the items alone, the
// reference batch and their compare, 12HN).
func BenchmarkScanGPURMSNorm(b *testing.B) {
	needGPU(b)
	const n, h = 8192, 4096
	s := spec.ScanSpec{Target: "cuda-rmsnorm", To: n, Shape: spec.Shape{Hidden: h},
		Dists: []spec.Dist{spec.DistNormal, spec.DistBoundary, spec.DistHeavy}, Seed: 1}
	r := loopScan(b, s, func(r *Result) error {
		if r.Certificate == nil {
			return fmt.Errorf("cuda-rmsnorm not certified: %d differ", r.Differing)
		}
		return nil
	})
	draws := float64(len(s.Dists))
	steps := float64(n) * float64(n+1) / 2
	small := float64(PanelItems-1) * float64(PanelItems) / 2 // rows of the per-step values 1..63
	bytes := draws * (6*h*(steps-small) + 12*h*small + 12*h*n)
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/scan")
	b.ReportMetric(draws*(steps+2*n)/sec, "rows/s")
	b.ReportMetric(bytes/1e12, "TB")
	b.ReportMetric(bytes/sec/1e12, "TB/s")
	b.ReportMetric(r.Elapsed.Seconds(), "s/last")
}

// The path-parity pair cuda-drift-attn-tile48 vs cuda-attn_decode gives
// the map and the differing KV lengths of its CPU twin drift-attn-tile48
// vs oracle-attn_decode, with taps (the GPU attention kernels write the
// fp32 outputs before rounding, the oracle targets' taps) and without:
// the spec of `bitparity scan --target cuda-drift-attn-tile48,cuda-attn_decode
// --to 200 --heads 4 --kv-heads 2 --head-dim 16 --rows 2`.
func TestPathScanGPUMatchesCPU(t *testing.T) {
	needGPU(t)
	for _, noTaps := range []bool{false, true} {
		var res [2]*Result
		for i, pair := range [][2]string{{"cuda-drift-attn-tile48", "cuda-attn_decode"}, {"drift-attn-tile48", "oracle-attn_decode"}} {
			r, err := Run(context.Background(), PathSpec{Prefill: pair[0], Decode: pair[1], To: 200, Seqs: 2,
				Heads: 4, KVHeads: 2, HeadDim: 16, Seed: 1, NoTaps: noTaps}.ScanSpec(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			res[i] = r
		}
		dev, host := res[0], res[1]
		t.Logf("taps off %v: GPU map %s, differ at %s; CPU map %s, differ at %s", noTaps,
			MapWords(dev.Map), Ranges(dev.Differ), MapWords(host.Map), Ranges(host.Differ))
		if !reflect.DeepEqual(dev.Differ, host.Differ) {
			t.Errorf("taps off %v: the GPU pair differs at %s, its CPU twin at %s", noTaps, Ranges(dev.Differ), Ranges(host.Differ))
		}
		if !reflect.DeepEqual(dev.Map, host.Map) {
			t.Errorf("taps off %v: GPU map %s, CPU map %s", noTaps, MapWords(dev.Map), MapWords(host.Map))
		}
		if !noTaps && (len(host.Differ) == 0 || host.Differ[0] <= 48) {
			t.Errorf("with taps the CPU twin differs at %s, want a first difference past the tile edge 48", Ranges(host.Differ))
		}
	}
}
