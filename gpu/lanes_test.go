//go:build cuda

package gpu

import (
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestLanes: Lane(0) is the device Open returned and a lane is made once;
// a worker's checks go to lane worker mod Streams(), work of no worker to
// lane 0; a lane computes the same bits as lane 0; and a compare across
// lanes is refused, not raced.
func TestLanes(t *testing.T) {
	d := device(t)
	if l, err := d.Lane(0); err != nil || l != d {
		t.Fatalf("Lane(0) = %p, %v; want the device itself", l, err)
	}
	l2, err := d.Lane(2)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := l2.Lane(2); again != l2 {
		t.Error("Lane(2) asked twice gave two lanes")
	}
	if l2.stream == d.stream {
		t.Error("lane 2 shares lane 0's stream")
	}
	for _, bad := range []int{-1, MaxStreams} {
		if _, err := d.Lane(bad); err == nil {
			t.Errorf("Lane(%d) made a lane", bad)
		}
	}
	defer SetStreams(Streams())
	if err := SetStreams(4); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		ctx  context.Context
		want int
	}{{context.Background(), 0}, {target.WithWorker(context.Background(), 6), 2}, {target.WithWorker(context.Background(), 4), 0}} {
		got, err := d.forWorker(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := d.Lane(w.want); got != want {
			t.Errorf("forWorker gave another lane than lane %d", w.want)
		}
	}

	tg, err := target.Lookup(Name(spec.OpRMSNorm))
	if err != nil {
		t.Fatal(err)
	}
	b, err := inputs.Of(spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
		In: spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 3, Eps: 1e-6, Shape: spec.Shape{Rows: 37, Hidden: 130}})
	if err != nil {
		t.Fatal(err)
	}
	a0, err := tg.Run(context.Background(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := tg.Run(target.WithWorker(context.Background(), 2), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a0.Device.(*devOut).d != d || a2.Device.(*devOut).d != l2 {
		t.Fatal("the outputs are not on lanes 0 and 2")
	}
	rows := spec.Iota(37)
	v0, err := a0.Device.Fetch(rows)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := a2.Device.Fetch(rows)
	if err != nil {
		t.Fatal(err)
	}
	for i := range v0 {
		if oracle.ToBits(oracle.BF16, v0[i]) != oracle.ToBits(oracle.BF16, v2[i]) {
			t.Fatalf("value %d: lane 0 %g, lane 2 %g", i, v0[i], v2[i])
		}
	}
	if _, err := a0.Device.CompareRows(a2.Device, rows, rows, oracle.BF16); err == nil || !strings.Contains(err.Error(), "lanes") {
		t.Errorf("a compare across lanes: %v; want it refused", err)
	}
	if diffs, err := a2.Device.CompareRows(a2.Device, rows, rows, oracle.BF16); err != nil || len(diffs) != 0 {
		t.Errorf("lane 2 against itself: %v, %v", diffs, err)
	}
}
