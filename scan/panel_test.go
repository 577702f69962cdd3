package scan

import (
	"context"
	"reflect"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// compareQueue counts the compares queued on queuedOut outputs and not
// yet waited for (open now, most at any one time), and the outputs made,
// released, and released more than once.
type compareQueue struct{ open, most, made, released, twice int }

// queuedOut is a device output whose rows are on the host (fetched as
// fetchOnly fetches them) and whose compares are queued (target.CompareStarter) on a compareQueue until
// their wait is called, as a GPU's are.
type queuedOut struct {
	fetchOnly
	q    *compareQueue
	gone bool
}

func (d *queuedOut) CompareRows(other target.DeviceOutput, ra, rb []int, dt oracle.DType) ([]target.RowDiff, error) {
	return target.CompareHost(d.o, other.(*queuedOut).o, ra, rb, dt), nil
}

func (d *queuedOut) StartCompare(other target.DeviceOutput, ra, rb []int, dt oracle.DType) (func() ([]target.RowDiff, error), error) {
	d.q.open++
	d.q.most = max(d.q.most, d.q.open)
	ds, err := d.CompareRows(other, ra, rb, dt)
	return func() ([]target.RowDiff, error) {
		d.q.open--
		return ds, err
	}, nil
}

func (d *queuedOut) Release() {
	if d.gone {
		d.q.twice++
	}
	d.gone = true
	d.q.released++
}

// queuedHeld is a batch held on the host whose outputs are queuedOut
// device outputs (their taps too).
type queuedHeld struct {
	hostHeld
	q *compareQueue
}

func (h *queuedHeld) resident() bool { return true }

func (h *queuedHeld) run(ctx context.Context, ids []int) (*target.Output, error) {
	return h.onDevice(h.hostHeld.run(ctx, ids))
}

func (h *queuedHeld) alone(ctx context.Context, n int) (*target.Output, error) {
	return h.onDevice(h.hostHeld.alone(ctx, n))
}

func (h *queuedHeld) onDevice(o *target.Output, err error) (*target.Output, error) {
	if err != nil {
		return nil, err
	}
	d := &target.Output{Rows: o.Rows, Cols: o.Cols, DType: o.DType, TapCols: o.TapCols, Device: &queuedOut{fetchOnly: fetchOnly{o: o}, q: h.q}}
	h.q.made++
	if o.TapCols > 0 {
		taps := &target.Output{Rows: o.Rows, Cols: o.TapCols, DType: oracle.FP32, Values: o.Taps}
		d.DeviceTaps = &queuedOut{fetchOnly: fetchOnly{o: taps}, q: h.q}
		h.q.made++
	}
	return d, nil
}

// A value below the panel runs its further batches (panelBatches) and
// queues all their compares before it waits for one: at v = 1, the 63
// batches' compares are queued at once. Every output is released once,
// and the scan gives the map, diffs and counts it gives on the host.
func TestItemsClassQueuesPanelCompares(t *testing.T) {
	s := spec.ScanSpec{Target: "drift-rmsnorm-te-mod32", From: 1, To: 100, Shape: spec.Shape{Hidden: 256},
		Seed: 1, Dists: []spec.Dist{spec.DistNormal}}
	want := run(t, s)
	if len(want.Diffs) == 0 {
		t.Fatal("the host scan found no differing value: nothing of the panel's digests is exercised")
	}
	old := holders
	q := &compareQueue{}
	holders = []func(target.Target, *target.Batch) (held, error){func(tg target.Target, b *target.Batch) (held, error) {
		return &queuedHeld{hostHeld: hostHeld{t: tg, b: b}, q: q}, nil
	}}
	t.Cleanup(func() { holders = old })
	got := run(t, s)
	if q.most < PanelItems-1 {
		t.Errorf("at most %d compares queued at once, want at least %d (the further batches of v = 1)", q.most, PanelItems-1)
	}
	if q.open != 0 {
		t.Errorf("%d compares never waited for", q.open)
	}
	if q.released != q.made || q.twice != 0 {
		t.Errorf("%d outputs made, %d releases, %d of an output already released", q.made, q.released, q.twice)
	}
	if !reflect.DeepEqual(got.Map, want.Map) || !reflect.DeepEqual(got.Diffs, want.Diffs) {
		t.Errorf("map %s %q, diffs %d; on the host %s %q, %d", got.Map.Kind, got.Map.Rule, len(got.Diffs), want.Map.Kind, want.Map.Rule, len(want.Diffs))
	}
	if got.Differing != want.Differing || got.Batches != want.Batches || got.RowsCompared != want.RowsCompared {
		t.Errorf("differing %d, batches %d, rows compared %d; on the host %d, %d, %d",
			got.Differing, got.Batches, got.RowsCompared, want.Differing, want.Batches, want.RowsCompared)
	}
}
