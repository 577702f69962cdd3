//go:build cuda

package scan

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The GPU row drift models (gpu/drift_rows.go) scan as their CPU twins
// do (TestControlMaps): each scan of cuda-<twin>, its batch held on the
// device, gives the twin's map, the same classes, rule and note and the
// same onsets pinned, and is never certified.
func TestScanGPURowControls(t *testing.T) {
	needGPU(t)
	for _, s := range []spec.ScanSpec{
		items("drift-rmsnorm-one-row-300", 290, 310, 256),
		items("drift-rmsnorm-tail-tile-64", 894, 962, 128),
		items("drift-rmsnorm-second-wave-264", 250, 290, 256),
		normalOnly(items("drift-rmsnorm-second-wave-264", 250, 290, 256)),
		items("drift-rmsnorm-capture-buckets", 240, 270, 1024),
		items("drift-rmsnorm-atomic-128", 120, 140, 256),
	} {
		t.Run(fmt.Sprintf("%s %d..%d %v", s.Target, s.From, s.To, s.Dists), func(t *testing.T) {
			cpu := run(t, s)
			s.Target = "cuda-" + s.Target
			gpu := run(t, s)
			if gpu.Certificate != nil || gpu.Differing == 0 {
				t.Fatal("a control was certified")
			}
			if !gpu.Resident {
				t.Error("the inputs did not stay on the device")
			}
			if got, want := classWords(gpu.Map), classWords(cpu.Map); got != want {
				t.Errorf("GPU map %s\nCPU twin's %s", got, want)
			}
			if gpu.Map.Note != cpu.Map.Note {
				t.Errorf("note %q, the CPU twin's %q", gpu.Map.Note, cpu.Map.Note)
			}
			if got, want := pinned(gpu), pinned(cpu); !slices.Equal(got, want) {
				t.Errorf("onsets pinned %v, the CPU twin's %v", got, want)
			}
			t.Logf("%s: %s in %v (CPU twin %v)", s.Target, MapWords(gpu.Map), gpu.Elapsed, cpu.Elapsed)
		})
	}
}

// classWords is a map's rule and classes in one line.
func classWords(m *spec.DriftMap) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", m.Kind, m.Rule)
	for _, c := range m.Classes {
		fmt.Fprintf(&b, "; %s: %v", c.Label, c.Values)
	}
	return b.String()
}

func pinned(r *Result) []int {
	var vs []int
	for _, o := range r.Onsets {
		if o.Joined {
			vs = append(vs, o.Value)
		}
	}
	return vs
}

// BenchmarkScanGPURowControlsLlama scans the GPU row drift models at
// llama3-8b's hidden size (4096) over batch sizes 1..8192 (the
// nondeterministic one over 1..1024: it runs step by step, one launch a
// run of rows of one order), on the default draws, beside cuda-rmsnorm's
// scan of the same spec (which must be certified). None of the controls is
// certified, every value is mapped, and the values outside class A are
// exactly those where some row of the batch takes another schedule than a
// row alone (the twin's policy); the nondeterministic model's are all in
// class nondeterministic, and the three models with two paths have their
// two-class rule. The H200 runs it (docs/detection.md, "Drift maps"):
//
//	make test-gpu PKGS=./scan/ TESTFLAGS="-run '^$' -bench ScanGPURowControlsLlama -benchtime 1x -v"
func BenchmarkScanGPURowControlsLlama(b *testing.B) {
	needGPU(b)
	tests := []struct {
		target string
		to     int
		policy func(b *target.Batch, row int) oracle.Schedule // nil: an exact target
		rule   string                                         // "": not checked (tail tile: a class a 64-row tile)
	}{
		{"cuda-rmsnorm", 8192, nil, ""},
		{"cuda-drift-rmsnorm-one-row-300", 8192, target.OneRow, "rows <= 299 -> A, rows >= 300 -> B"},
		{"cuda-drift-rmsnorm-tail-tile-64", 8192, target.TailTileRows, "rows % 64 != 0 and rows >= 900 -> B, otherwise -> A"},
		{"cuda-drift-rmsnorm-second-wave-264", 8192, target.SecondWaveRows, "rows <= 264 -> A, rows >= 265 -> B"},
		{"cuda-drift-rmsnorm-capture-buckets", 8192, target.CaptureBucketRows, "rows <= 248 -> A, rows >= 249 -> B"},
		{"cuda-drift-rmsnorm-atomic-128", 1024, target.AtomicPartials(0), "rows <= 127 -> A, rows >= 128 -> nondeterministic"},
	}
	for _, tt := range tests {
		b.Run(tt.target, func(b *testing.B) {
			s := items(tt.target, 1, tt.to, 4096)
			r := loopScan(b, s, nil)
			b.ReportMetric(r.Elapsed.Seconds(), "s/scan")
			b.Logf("%s over 1..%d at hidden 4096: %s; %d rows compared in %d batches, %v", s.Target, tt.to, MapWords(r.Map), r.RowsCompared, r.Batches, r.Elapsed)
			if !r.Resident {
				b.Error("the inputs did not stay on the device")
			}
			if tt.policy == nil {
				if r.Certificate == nil {
					b.Fatalf("%s not certified: %d differ", s.Target, r.Differing)
				}
				return
			}
			if r.Certificate != nil || r.Differing == 0 {
				b.Fatal("a control was certified")
			}
			class := map[int]string{}
			for _, c := range r.Map.Classes {
				for _, v := range c.Values {
					class[v] = c.Label
				}
			}
			var missing, wrong []int
			for v := 1; v <= tt.to; v++ {
				got, ok := class[v]
				switch {
				case !ok:
					missing = append(missing, v)
				case !drifts(tt.policy, v):
					if got != "A" {
						wrong = append(wrong, v)
					}
				case strings.HasSuffix(tt.rule, driftmap.Nondeterministic):
					if got != driftmap.Nondeterministic {
						wrong = append(wrong, v)
					}
				case got == "A":
					wrong = append(wrong, v)
				}
			}
			if len(missing) > 0 {
				b.Errorf("%d values not mapped, first %v", len(missing), missing[:min(len(missing), 8)])
			}
			if len(wrong) > 0 {
				b.Errorf("%d values in the wrong class, first %v (map %s)", len(wrong), wrong[:min(len(wrong), 8)], r.Map.Rule)
			}
			if tt.rule != "" && r.Map.Rule != tt.rule {
				b.Errorf("rule %q, want %q", r.Map.Rule, tt.rule)
			}
		})
	}
}

// drifts reports whether some row of a batch of n rows takes another
// schedule under policy p than a row alone (a batch of one).
func drifts(p func(b *target.Batch, row int) oracle.Schedule, n int) bool {
	batch := func(n int) *target.Batch {
		return &target.Batch{Op: spec.OpRMSNorm, In: oracle.BF16, Out: oracle.BF16, Input: &oracle.RMSNormInput{Rows: n, Hidden: 4096}}
	}
	alone := p(batch(1), 0)
	b := batch(n)
	for r := range n {
		if p(b, r) != alone {
			return true
		}
	}
	return false
}
