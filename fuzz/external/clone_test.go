package external

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
)

// TestAddAllSpares: with Prestart, AddAll starts Procs-1 spares of the
// command line beside the first process; Clone hands them out, then starts
// further processes; every clone is the same adapter (its hello, its
// name) and answers a step of KV cuts with the first process's digests.
// After DropSpares, Clone starts a process. A negative Procs, or one past
// MaxProcs, is refused.
func TestAddAllSpares(t *testing.T) {
	ctx := context.Background()
	cmd := adapterCmd(t, "adapters/numpy_ops.py", string(spec.OpAttnPrefill))
	names, err := AddAll(ctx, []string{cmd}, Options{Name: "exec:test-spares", Procs: 3, Prestart: true})
	if err != nil {
		t.Fatal(err)
	}
	first, ok := Lookup(names[0])
	if !ok {
		t.Fatalf("AddAll registered %v, Lookup finds none", names)
	}
	t.Cleanup(func() { first.Close() })
	if first.spares == nil || first.spares.left != 2 {
		t.Fatalf("spares %+v, want 2 left", first.spares)
	}
	b, err := inputs.Of(testCase(spec.OpAttnPrefill, spec.BF16, spec.BF16, spec.DistNormal, 5))
	if err != nil {
		t.Fatal(err)
	}
	cuts := []int{1, 33, 70}
	digests := func(tg *Target) [][]uint64 {
		t.Helper()
		if err := tg.HoldSequences(ctx, b); err != nil {
			t.Fatal(err)
		}
		sts, err := tg.StepCuts(ctx, cuts)
		if err != nil {
			t.Fatal(err)
		}
		var ds [][]uint64
		for _, st := range sts {
			ds = append(ds, st.Digests)
		}
		return ds
	}
	want := digests(first)
	for i := range 3 { // two spares, then a process started at the call
		c, err := first.Clone(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if c == first || c.Info().Name != first.Info().Name || c.Hello()["name"] != first.Hello()["name"] {
			t.Fatalf("clone %d: %s (%v), the first %s", i, c.Info().Name, c.Hello(), first.Info().Name)
		}
		if got := digests(c); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("clone %d answered cuts %v with other digests", i, cuts)
		}
		if left := first.spares.left; left != max(0, 1-i) {
			t.Fatalf("after clone %d: %d spares left", i, left)
		}
	}
	names, err = AddAll(ctx, []string{cmd}, Options{Name: "exec:test-spares-dropped", Procs: 3, Prestart: true})
	if err != nil {
		t.Fatal(err)
	}
	dropped, _ := Lookup(names[0])
	t.Cleanup(func() { dropped.Close() })
	dropped.DropSpares()
	if left := dropped.spares.left; left != 0 {
		t.Fatalf("DropSpares left %d spares", left)
	}
	if c, err := dropped.Clone(ctx); err != nil {
		t.Fatalf("a clone after DropSpares: %v", err)
	} else {
		c.Close()
	}
	for _, n := range []int{-1, MaxProcs + 1} {
		if _, err := AddAll(ctx, []string{cmd}, Options{Procs: n}); err == nil || !strings.Contains(err.Error(), "--exec-procs") {
			t.Fatalf("Procs %d: %v, want an error naming --exec-procs", n, err)
		}
	}
}
