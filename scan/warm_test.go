package scan

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// warmHeld is a batch held on the host whose target records the batch
// sizes it is warmed for, or fails to warm with fail.
type warmHeld struct {
	hostHeld
	calls *[][]int
	fail  error
}

func (h *warmHeld) warm(_ context.Context, sizes []int) error {
	*h.calls = append(*h.calls, slices.Clone(sizes))
	return h.fail
}

// withWarmHeld makes every held batch of the test a warmHeld.
func withWarmHeld(t *testing.T, calls *[][]int, fail error) {
	old := holders
	holders = []func(target.Target, *target.Batch) (held, error){func(tg target.Target, b *target.Batch) (held, error) {
		return &warmHeld{hostHeld: hostHeld{t: tg, b: b}, calls: calls, fail: fail}, nil
	}}
	t.Cleanup(func() { holders = old })
}

// A scan of the items dimension warms its target once, on its first
// draw, for every batch size its draws run (1, each value, the
// reference batch), and finds what it finds unwarmed; a failed warm is
// the scan's error.
func TestScanWarmsOnceForEveryBatchSize(t *testing.T) {
	s := spec.ScanSpec{Target: "drift-rmsnorm-te-mod32", From: 20, To: 70, Shape: spec.Shape{Hidden: 64},
		Seed: 1, Dists: []spec.Dist{spec.DistNormal, spec.DistBoundary}}
	want := run(t, s)
	var calls [][]int
	withWarmHeld(t, &calls, nil)
	got := run(t, s)
	sizes := append([]int{1}, spec.Iota(51)...)
	for i := 1; i < len(sizes); i++ {
		sizes[i] += 20 // 20..70
	}
	if len(calls) != 1 || !reflect.DeepEqual(calls[0], sizes) {
		t.Errorf("warmed %d times, with %v; want once, with %v", len(calls), calls, sizes)
	}
	if !reflect.DeepEqual(got.Map, want.Map) || got.Differing != want.Differing || got.Batches != want.Batches {
		t.Errorf("map %q, %d differing, %d batches; unwarmed %q, %d, %d", got.Map.Rule, got.Differing, got.Batches,
			want.Map.Rule, want.Differing, want.Batches)
	}

	calls = nil
	fail := errors.New("cuBLAS status 3")
	withWarmHeld(t, &calls, fail)
	_, err := Run(context.Background(), s, Options{})
	if !errors.Is(err, fail) || !strings.Contains(err.Error(), "prepare the target for 52 batch sizes") {
		t.Errorf("a failed warm: scan error %v", err)
	}
}
