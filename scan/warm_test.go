package scan

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// warmHeld is a batch held on the host whose target records the batch
// sizes it is warmed for, or fails to warm with fail. Its warm returns
// only once the draw has computed its items alone (or after 10 s, with
// errAlone), as a preparation running beside the draw does.
type warmHeld struct {
	hostHeld
	calls   *[][]int
	fail    error
	started chan struct{} // closed by the first alone
	once    sync.Once
}

var errAlone = errors.New("the draw computed nothing while its target was prepared")

func (h *warmHeld) warm(_ context.Context, sizes []int) error {
	*h.calls = append(*h.calls, slices.Clone(sizes))
	select {
	case <-h.started:
	case <-time.After(10 * time.Second):
		return errAlone
	}
	return h.fail
}

func (h *warmHeld) alone(ctx context.Context, n int) (*target.Output, error) {
	h.once.Do(func() { close(h.started) })
	return h.hostHeld.alone(ctx, n)
}

// withWarmHeld makes every held batch of the test a warmHeld.
func withWarmHeld(t *testing.T, calls *[][]int, fail error) {
	old := holders
	holders = []func(target.Target, *target.Batch) (held, error){func(tg target.Target, b *target.Batch) (held, error) {
		return &warmHeld{hostHeld: hostHeld{t: tg, b: b}, calls: calls, fail: fail, started: make(chan struct{})}, nil
	}}
	t.Cleanup(func() { holders = old })
}

// A scan of the items dimension warms its target once, on its first
// draw, for every batch size its draws run, in the order the draw first
// runs them (1, the reference batch, each value), and finds what it finds
// unwarmed. The draw runs while the target is prepared, and a failed
// warm is the scan's error.
func TestScanWarmsOnceForEveryBatchSize(t *testing.T) {
	s := spec.ScanSpec{Target: "drift-rmsnorm-te-mod32", From: 20, To: 70, Shape: spec.Shape{Hidden: 64},
		Seed: 1, Dists: []spec.Dist{spec.DistNormal, spec.DistBoundary}}
	want := run(t, s)
	var calls [][]int
	withWarmHeld(t, &calls, nil)
	got := run(t, s)
	sizes := append([]int{1, 70}, spec.Iota(50)...) // in the order the draw runs them
	for i := 2; i < len(sizes); i++ {
		sizes[i] += 20 // 20..69
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
