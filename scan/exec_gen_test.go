package scan

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/spec"
)

// TestExecScanGenerated: a scan of the NumPy kit whose hello says
// scan_gen="2" (BITPARITY_SCAN_GEN=2), holds each draw's batch by its recipe (the kit makes the
// rows), but for the boundary draw, whose rows are nudged on the host and
// travel; and gives the same Result, certificate or map, count for count,
// as the same scan with every batch's rows sent (BITPARITY_SCAN_GEN=none),
// on an exact RMSNorm, a drifting one and logprob.
func TestExecScanGenerated(t *testing.T) {
	py := pythontest.NumPy(t)
	tests := []struct {
		name    string
		cmdline string
		op      spec.Op
		s       spec.ScanSpec
		rule    string // the map's rule; "" for a certificate
	}{
		{"exact", adapter(py, "numpy_ops.py", "rmsnorm"), spec.OpRMSNorm,
			spec.ScanSpec{Dim: spec.ScanItems, From: 1, To: 48, Shape: spec.Shape{Hidden: 40},
				Dists: []spec.Dist{spec.DistNormal, spec.DistHeavy, spec.DistBoundary}, Seed: 3}, ""},
		{"split", adapter(py, "examples/numpy_split.py", "--from", "40"), spec.OpRMSNorm,
			spec.ScanSpec{Dim: spec.ScanItems, From: 1, To: 64, Shape: spec.Shape{Hidden: 48},
				Dists: []spec.Dist{spec.DistNormal, spec.DistTies}, Seed: 1}, "rows <= 39 -> A, rows >= 40 -> B"},
		{"logprob", adapter(py, "numpy_ops.py", "logprob"), spec.OpLogProb,
			spec.ScanSpec{Dim: spec.ScanItems, From: 1, To: 24, Shape: spec.Shape{Vocab: 300},
				Dists: []spec.Dist{spec.DistOutlier}, Seed: 2}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]*Result
			for i, gen := range []string{"2", "none"} {
				name, et := adapterTarget(t, tc.cmdline, tc.op, "BITPARITY_SCAN_GEN", gen)
				s := tc.s
				s.Target, s.Op = name, tc.op
				r, err := Run(context.Background(), s, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if et.Generates() != (gen == "2") {
					t.Fatalf("BITPARITY_SCAN_GEN=%q: Generates %v, hello %v", gen, et.Generates(), et.Hello())
				}
				// the last draw's hold: generated but for a boundary draw
				last := s.Dists[len(s.Dists)-1]
				if want := gen == "2" && last != spec.DistBoundary; et.HeldGenerated() != want {
					t.Fatalf("BITPARITY_SCAN_GEN=%q, last draw %s: the held batch generated %v, want %v", gen, last, et.HeldGenerated(), want)
				}
				got[i] = r
			}
			a, b := got[0], got[1]
			switch {
			case tc.rule == "" && a.Certificate == nil:
				t.Fatalf("no certificate: %d differing, diffs %+v", a.Differing, a.Diffs)
			case tc.rule != "" && a.Map.Rule != tc.rule:
				t.Fatalf("map %q, want %q", a.Map.Rule, tc.rule)
			}
			sameScan(t, "generated", a, "rows sent", b)
			if (a.Certificate == nil) != (b.Certificate == nil) {
				t.Errorf("certificate generated %v, rows sent %v", a.Certificate != nil, b.Certificate != nil)
			}
		})
	}
}
