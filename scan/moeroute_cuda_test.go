//go:build cuda

package scan

import (
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
)

// TestMoERouteGPUScan: our moe_route kernel is certified over tokens
// 1..8192 at Qwen3-30B-A3B's router (128 experts, top 8; profile
// qwen3-30b-a3b) on every draw (sensitive, normal, ties), and its drift
// twin gives the CPU model's exact map and words: ties broken the other
// way from 128 tokens on.
func TestMoERouteGPUScan(t *testing.T) {
	needGPU(t)
	s := spec.ScanSpec{Target: gpu.MoERouteName, To: 8192, Shape: dims("experts", 128, "top_k", 8)}
	if testing.Short() {
		s.To = 1024
	}
	r, err := Run(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Certificate == nil || r.Differing != 0 {
		t.Errorf("%s over tokens 1..%d: not certified: map %q, %d rows differ, diffs %+v", s.Target, s.To, r.Map.Rule, r.Differing, r.Diffs)
	}
	t.Logf("%s, tokens 1..%d at experts=128 top_k=8, draws %v: certified=%v, %d rows compared in %d batches, %s",
		s.Target, s.To, r.Draws, r.Certificate != nil, r.RowsCompared, r.Batches, r.Elapsed)

	twin := spec.ScanSpec{Target: gpu.MoERouteTieHighName, To: 130, Dists: []spec.Dist{"sensitive"}}
	cpu := twin
	cpu.Target = "drift-moe-route-tie-high-128"
	got, err := Run(context.Background(), twin, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Run(context.Background(), cpu, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Map.Rule != "tokens <= 127 -> A, tokens >= 128 -> B" || got.Map.Rule != want.Map.Rule {
		t.Errorf("%s: map %q, its CPU twin %q", twin.Target, got.Map.Rule, want.Map.Rule)
	}
	if len(got.Diffs) == 0 || len(want.Diffs) == 0 || got.Diffs[0].Value != 128 || got.Diffs[0].Words != want.Diffs[0].Words {
		t.Errorf("%s: diffs %+v, its CPU twin's %+v", twin.Target, got.Diffs, want.Diffs)
	} else if !strings.Contains(got.Diffs[0].Words, "by a tie") {
		t.Errorf("%s at 128 tokens: %q says no tie", twin.Target, got.Diffs[0].Words)
	}
}
