//go:build cuda

package gpu

import (
	"context"
	"math"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestUserHeld: a held batch of the drifting example kernel (it sums in
// two halves unless rows % 32 == 0, so a wrong row count shows) gives, for
// a prefix, a gather and the rows alone, the bits Run gives on the same
// rows uploaded as a batch.
func TestUserHeld(t *testing.T) {
	m := exampleManifest(t, "rmsnorm_drift")
	k, err := NewUserKernel(m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fuzz.Inputs(userCase(70, 96, spec.BF16, spec.BF16, 3))
	if err != nil {
		t.Fatal(err)
	}
	h, err := HoldUserKernel(k, b)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	ctx := context.Background()
	want := func(ids []int) []float32 {
		g, err := fuzz.Gather(b, ids)
		if err != nil {
			t.Fatal(err)
		}
		o, err := k.Run(ctx, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		return o.Values
	}
	same := func(what string, o *target.Output, w []float32) {
		t.Helper()
		defer o.Release()
		if err := o.ToHost(); err != nil {
			t.Fatal(err)
		}
		if len(o.Values) != len(w) {
			t.Fatalf("%s: %d values, want %d", what, len(o.Values), len(w))
		}
		for i := range w {
			if math.Float32bits(o.Values[i]) != math.Float32bits(w[i]) {
				t.Fatalf("%s: value %d (row %d) is %v, Run gives %v", what, i, i/o.Cols, o.Values[i], w[i])
			}
		}
	}
	for _, ids := range [][]int{seq(32), seq(45), seq(70), {5, 6, 7, 40, 41, 0, 69}, {3}} {
		o, err := h.Run(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		same("run", o, want(ids))
	}
	alone, err := h.Alone(ctx, 70)
	if err != nil {
		t.Fatal(err)
	}
	var w []float32
	for i := range 70 {
		w = append(w, want([]int{i})...)
	}
	same("alone", alone, w)
	if _, err := HoldUserKernel(mustTarget(t, "oracle-rmsnorm"), b); err == nil {
		t.Error("HoldUserKernel held a batch for a target that is not a user kernel")
	}
}

func mustTarget(t *testing.T, name string) target.Target {
	t.Helper()
	tg, err := target.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}
