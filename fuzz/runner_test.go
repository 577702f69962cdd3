package fuzz

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestDefaultWorkersFollowTheDevice: a campaign of CPU targets defaults to
// DefaultWorkers workers, one with a GPU target to DefaultGPUWorkers, and
// a set Workers is kept either way.
func TestDefaultWorkersFollowTheDevice(t *testing.T) {
	gpuLike := &testTarget{info: target.Info{Name: "test-on-cuda", Op: spec.OpRMSNorm, Device: "cuda:0 (test)"},
		run: func(_ context.Context, b *target.Batch, rows []int) (*target.Output, error) {
			return oracleRun(b, rows)
		}}
	target.Register("test-on-cuda", func() (target.Target, error) { return gpuLike, nil })
	cpu := []*pairState{{Pair: target.Pair{Targets: []string{target.OracleName(spec.OpRMSNorm)}}}}
	gpu := []*pairState{{Pair: target.Pair{Targets: []string{target.OracleName(spec.OpRMSNorm), "test-on-cuda"}}}}
	for _, tt := range []struct {
		name    string
		workers int
		pairs   []*pairState
		want    int
	}{
		{"cpu", 0, cpu, DefaultWorkers()},
		{"gpu", 0, gpu, DefaultGPUWorkers()},
		{"gpu, set", 3, gpu, 3},
	} {
		if got := newRunner(&Campaign{Workers: tt.workers}, tt.pairs).workers; got != tt.want {
			t.Errorf("%s: %d workers, want %d", tt.name, got, tt.want)
		}
	}
	if DefaultGPUWorkers() <= DefaultWorkers() {
		t.Errorf("DefaultGPUWorkers %d, not above DefaultWorkers %d", DefaultGPUWorkers(), DefaultWorkers())
	}
}
