//go:build cuda

package scan

import (
	"reflect"
	"testing"

	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// A scan of an rmsnorm user kernel (in this process: a worker's scan) holds
// each draw's batch with its rows made on the device, checks the values
// from 64 on in bulk, and gives the Result of the per-step scan: the
// drifting example kernel's map, the invariant one's certificate.
func TestScanUserKernelBulk(t *testing.T) {
	needGPU(t)
	three := []spec.Dist{spec.DistNormal, spec.DistBoundary, spec.DistHeavy}
	for _, name := range []string{"rmsnorm_drift", "rmsnorm_invariant"} {
		t.Run(name, func(t *testing.T) {
			k, err := gpu.NewUserKernel(exampleAttnManifest(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := target.Lookup(k.Info().Name); err != nil {
				target.Register(k.Info().Name, func() (target.Target, error) { return k, nil })
			}
			c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
				Shape: spec.Shape{Rows: 300, Hidden: 256}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistBoundary, Seed: 1}
			h, _, err := holdUserKernelCase(k, c, nil)
			if err != nil || h == nil {
				t.Fatalf("the case was not held with its rows made on the device: %v", err)
			}
			if _, ok := h.(prefixChecker); !ok {
				t.Errorf("the user kernel's held batch (%T) has no bulk check", h)
			}
			h.release()
			s := spec.ScanSpec{Target: k.Info().Name, To: 300, Shape: spec.Shape{Hidden: 256}, In: spec.BF16, Out: spec.BF16,
				Eps: 1e-6, Dists: three, Seed: 1}
			want, got := perStepAndBulk(t, s)
			t.Logf("%s: bulk %v, per step %v; map %s", name, got.Elapsed, want.Elapsed, MapWords(got.Map))
			if !got.Resident {
				t.Error("the inputs did not stay on the device")
			}
			if !reflect.DeepEqual(got.Map, want.Map) || !reflect.DeepEqual(got.Diffs, want.Diffs) {
				t.Errorf("map %q (%d diffs), per step %q (%d)", got.Map.Rule, len(got.Diffs), want.Map.Rule, len(want.Diffs))
			}
			if got.Differing != want.Differing || got.Batches != want.Batches || got.RowsCompared > want.RowsCompared {
				t.Errorf("differing %d, batches %d, rows compared %d; per step %d, %d, %d",
					got.Differing, got.Batches, got.RowsCompared, want.Differing, want.Batches, want.RowsCompared)
			}
			if certified := name == "rmsnorm_invariant"; (got.Certificate != nil) != certified || (want.Certificate != nil) != certified {
				t.Errorf("certified %v, per step %v, want %v", got.Certificate != nil, want.Certificate != nil, certified)
			}
		})
	}
}
