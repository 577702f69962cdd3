//go:build cuda

package gpu

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestUserHeld: a held batch of the drifting example kernel (it sums in
// two halves unless rows % 32 == 0, so a wrong row count shows) gives, for
// a prefix, a gather and the rows alone, the bits Run gives on the same
// rows uploaded as a batch.
func TestUserHeld(t *testing.T) {
	k, b, h := heldExample(t, "rmsnorm_drift", userCase(70, 96, spec.BF16, spec.BF16, 3))
	defer h.Release()
	ctx := context.Background()
	want := func(ids []int) []float32 { return runGathered(t, k, b, ids).Values }
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
	for _, ids := range [][]int{spec.Iota(32), spec.Iota(45), spec.Iota(70), {5, 6, 7, 40, 41, 0, 69}, {3}} {
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
	if _, err := HoldUserKernel(lookup(t, "oracle-rmsnorm"), b); err == nil {
		t.Error("HoldUserKernel held a batch for a target that is not a user kernel")
	}
}

// heldExample loads example kernel name and holds fuzz's batch of case c
// on it: the kernel, the batch and the held batch, which the caller
// releases.
func heldExample(t *testing.T, name string, c spec.Case) (target.Target, *target.Batch, *UserHeld) {
	t.Helper()
	k, err := NewUserKernel(exampleManifest(t, name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := inputs.Of(c)
	if err != nil {
		t.Fatal(err)
	}
	h, err := HoldUserKernel(k, b)
	if err != nil {
		t.Fatal(err)
	}
	return k, b, h
}

// TestUserHeldCheckPrefixes: the bulk check of a held user kernel's
// prefixes flags exactly the prefixes whose Run has rows differing from
// the same rows alone, each with its count of such rows (the drifting
// example kernel differs at rows % 32 == 0, the invariant one nowhere),
// and the held batch still runs after it. The output is fp32: the drift
// (the sum of squares in order, not in two halves) moves rstd by an ulp
// or so, which bf16 output at hidden 96 rounds away: on this draw no row
// of prefixes 32 and 64 differs in bf16, 14 and 27 rows differ in fp32
// (the kernel's arithmetic done in Go), so bf16 output tested nothing.
func TestUserHeldCheckPrefixes(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"rmsnorm_drift", "rmsnorm_invariant"} {
		_, _, h := heldExample(t, name, userCase(70, 96, spec.BF16, spec.FP32, 3))
		alone, err := h.Alone(ctx, 70)
		if err != nil {
			t.Fatal(err)
		}
		if err := alone.ToHost(); err != nil {
			t.Fatal(err)
		}
		want := map[int]int{}
		for v := 1; v <= 70; v++ {
			o, err := h.Run(ctx, spec.Iota(v))
			if err == nil {
				err = o.ToHost()
			}
			if err != nil {
				t.Fatal(err)
			}
			for r := range v {
				for j := r * o.Cols; j < (r+1)*o.Cols; j++ {
					if math.Float32bits(o.Values[j]) != math.Float32bits(alone.Values[j]) {
						want[v]++
						break
					}
				}
			}
			o.Release()
		}
		diffs, err := h.CheckPrefixes(ctx, PrefixCheck{Items: spec.Iota(71)[1:], Alone: alone})
		if err != nil {
			t.Fatal(err)
		}
		got := map[int]int{}
		for _, d := range diffs {
			got[d.Items] = len(d.Alone)
		}
		if len(got) != len(want) {
			t.Errorf("%s: the bulk check flagged %v, the runs differ at %v", name, got, want)
		}
		for v, n := range want {
			if got[v] != n {
				t.Errorf("%s: prefix %d: the bulk check flagged %d rows, the run differs in %d", name, v, got[v], n)
			}
		}
		if name == "rmsnorm_drift" && len(want) == 0 {
			t.Errorf("%s: no prefix differs from its rows alone", name)
		}
		if name == "rmsnorm_invariant" && len(want) != 0 {
			t.Errorf("%s: prefixes %v differ from their rows alone", name, want)
		}
		if o, err := h.Run(ctx, []int{4, 2}); err != nil {
			t.Errorf("%s: run after the bulk check: %v", name, err)
		} else {
			o.Release()
		}
		alone.Release()
		h.Release()
	}
}

// TestUserHeldLazy: a held user kernel's lazy rmsnorm batch (rows made on
// the device, a boundary draw's nudged there) gives the bits of the same
// case made on the host and uploaded, for a prefix, a gather and the rows
// alone; a lazy batch of generator version 1 is not held.
func TestUserHeldLazy(t *testing.T) {
	k, err := NewUserKernel(exampleManifest(t, "rmsnorm_drift"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bitsOf := func(o *target.Output, err error) []uint32 {
		t.Helper()
		vals, _ := outBits(t, o, err)
		return vals
	}
	for _, dist := range []spec.Dist{spec.DistNormal, spec.DistBoundary, spec.DistHeavy} {
		c := userCase(70, 96, spec.BF16, spec.BF16, 3)
		c.GenVersion, c.Dist = 2, dist
		lb, err := inputs.Lazy(c)
		if err != nil || !lb.Lazy() {
			t.Fatalf("%s: lazy %v, %v", dist, lb != nil && lb.Lazy(), err)
		}
		hb, err := inputs.Of(c)
		if err != nil {
			t.Fatal(err)
		}
		lazy, err := HoldUserKernel(k, lb)
		if err != nil {
			t.Fatal(err)
		}
		host, err := HoldUserKernel(k, hb)
		if err != nil {
			t.Fatal(err)
		}
		for _, ids := range [][]int{spec.Iota(70), spec.Iota(33), {5, 6, 7, 40, 0, 69}} {
			if !slices.Equal(bitsOf(lazy.Run(ctx, ids)), bitsOf(host.Run(ctx, ids))) {
				t.Errorf("%s: batch of %d rows: the device-made rows give other bits than the host-made", dist, len(ids))
			}
		}
		if !slices.Equal(bitsOf(lazy.Alone(ctx, 70)), bitsOf(host.Alone(ctx, 70))) {
			t.Errorf("%s: rows alone differ", dist)
		}
		lazy.Release()
		host.Release()
	}
	c := userCase(8, 32, spec.BF16, spec.BF16, 3)
	c.GenVersion = 1
	lb, err := inputs.Lazy(c)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := HoldUserKernel(k, lb); !errors.Is(err, target.ErrUnsupported) {
		if h != nil {
			h.Release()
		}
		t.Errorf("a lazy batch of generator version 1: %v, want ErrUnsupported", err)
	}
}
