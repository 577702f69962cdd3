//go:build cuda

package gpu

import (
	"context"
	"math"
	"testing"

	"github.com/bitparity/bitparity/ops"
	opsall "github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/ops/moeroute"
	"github.com/bitparity/bitparity/oracle"
)

// TestMoERouteKernel: our moe_route kernel gives the oracle's rows bit for
// bit on every draw (sensitive: ties and 1-ulp near-ties at the top-k
// boundary; ties: tie-heavy logits), fp32 and bf16 logits, at the public
// MoE shapes and at k = experts; its drift twin breaks ties highest index
// first from 128 tokens on and then equals the oracle of tie=highest; and
// explicit rows of equal logits, infinities and NaNs route as the oracle
// routes them.
func TestMoERouteKernel(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	ctx := context.Background()
	exact := lookupMoE(t, MoERouteName)
	twin := lookupMoE(t, MoERouteTieHighName)
	op := moeroute.Op{}
	shapes := []ops.Shape{
		{moeroute.DimExperts: 128, moeroute.DimTopK: 8}, // Qwen3-30B-A3B
		{moeroute.DimExperts: 8, moeroute.DimTopK: 2},   // Mixtral-8x7B
		{moeroute.DimExperts: 256, moeroute.DimTopK: 8}, // DeepSeek-V3's routed experts
		{moeroute.DimExperts: 33, moeroute.DimTopK: 33}, // k = experts
		{moeroute.DimExperts: 1, moeroute.DimTopK: 1},
	}
	keys := make([]uint64, 300)
	for i := range keys {
		keys[i] = uint64(i)
	}
	for _, s := range shapes {
		for _, dt := range []oracle.DType{oracle.FP32, oracle.BF16} {
			for _, dist := range op.Record().Dists {
				in, err := op.Seeded(ops.Draw{Shape: s, DType: dt, Dist: dist, Seed: 7}, keys)
				if err != nil {
					t.Fatal(err)
				}
				sameAsOracle(t, exact, in, "", s.String()+" "+dt.String()+" "+dist)
				small, _ := in.Gather(keys2idx(moeroute.TieHighFrom - 1))
				sameAsOracle(t, twin, small, "", s.String()+" "+dt.String()+" "+dist+" (twin, 127 tokens)")
				sameAsOracle(t, twin, in, "tie=highest", s.String()+" "+dt.String()+" "+dist+" (twin, 300 tokens)")
			}
		}
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	s := ops.Shape{moeroute.DimExperts: 4, moeroute.DimTopK: 2}
	in, err := op.Explicit(s, oracle.FP32, []float32{
		1, 1, 1, 1, // every expert tied
		0, 2, 2, 0, // a tie at the top
		-inf, 0, -inf, 0,
		inf, 0, inf, 1, // inf - inf: NaN probabilities
		nan, 3, nan, -1,
		0, float32(math.Copysign(0, -1)), 0, -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	sameAsOracle(t, exact, in, "", "explicit rows")
	if _, err := exact.Run(ctx, &ops.Rows{Shape: s, DType: oracle.FP32, Cols: 4}); err != nil {
		t.Errorf("an empty batch: %v", err)
	}
}

func keys2idx(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

func lookupMoE(t *testing.T, name string) ops.Target {
	t.Helper()
	tg, ok := opsall.Lookup(name)
	if !ok {
		t.Fatalf("%s is not registered in ops/all", name)
	}
	return tg
}

// sameAsOracle fails unless every row of tg on in has the bits of the
// oracle of policy on in.
func sameAsOracle(t *testing.T, tg ops.Target, in ops.Input, policy, what string) {
	t.Helper()
	got, err := tg.Run(context.Background(), in)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	want, err := tg.Op().Reference(in, policy)
	if err != nil {
		t.Fatal(err)
	}
	var rows []int
	for r := range in.Items() {
		if !got.SameRow(r, want, r) {
			rows = append(rows, r)
		}
	}
	if len(rows) > 0 {
		t.Errorf("%s on %s: %d of %d rows differ from the oracle (%q): %s", tg.Name(), what, len(rows), in.Items(), policy,
			tg.Op().Words(in, want, got, rows))
	}
}
