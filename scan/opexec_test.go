package scan

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/spec"
)

// opAdapter starts cmdline, an adapter of an op package's op, under a
// fresh name (closed when the test ends) and returns the name.
func opAdapter(t testing.TB, cmdline string) string {
	t.Helper()
	name := fmt.Sprintf("exec:test-op-%d", adapterTargets.Add(1))
	et, err := external.Add(cmdline, "", external.Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { et.Close() })
	return name
}

// TestScanOpExec: scans of NumPy adapters of moe_route and quant_fp8
// through the process protocol, as of the op's CPU targets (TestRunOpMaps):
// the exact router is certified over tokens 1..48 on every draw (fp32 and
// bf16 logits), bit for bit the oracle, and so is the router GEMM and
// route (moe_router) over 1..24; a router that breaks ties highest
// index first from 40 tokens is found at exactly 40, the tokens that
// changed experts counted by a tie; per-tensor FP8 scaling drifts under
// neighbour replacement from 2 tokens and per-token scaling is certified
// (e4m3 and e5m2).
func TestScanOpExec(t *testing.T) {
	py := pythontest.NumPy(t)
	for _, tt := range []struct {
		args  []string
		s     spec.ScanSpec
		rule  string // "" certified
		words string // in the diff at the onset
		onset int
	}{
		{[]string{"moe_route"}, spec.ScanSpec{To: 48, Shape: dims("experts", 32, "top_k", 4)}, "", "", 0},
		{[]string{"moe_route"}, spec.ScanSpec{To: 24, Shape: dims("experts", 8, "top_k", 2), In: "bf16"}, "", "", 0},
		{[]string{"moe_route", "--moe-tie-high-from", "40"}, spec.ScanSpec{To: 44, Shape: dims("experts", 32, "top_k", 4), Dists: []spec.Dist{"sensitive"}},
			"tokens <= 39 -> A, tokens >= 40 -> B", "by a tie", 40},
		{[]string{"moe_router"}, spec.ScanSpec{To: 24, Shape: dims("hidden", 64, "experts", 16, "top_k", 2)}, "", "", 0},
		{[]string{"quant_fp8", "--fp8-scaling", "per_tensor"}, spec.ScanSpec{Dim: DimNeighbours, To: 12, Shape: dims("hidden", 32)},
			"tokens <= 1 -> A, tokens >= 2 -> B", "depend on other rows' values", 2},
		{[]string{"quant_fp8"}, spec.ScanSpec{Dim: DimNeighbours, To: 12, Shape: dims("hidden", 32)}, "", "", 0},
		{[]string{"quant_fp8", "--fp8-format", "e5m2"}, spec.ScanSpec{To: 16, Shape: dims("hidden", 64), In: "bf16"}, "", "", 0},
	} {
		what := strings.Join(tt.args, " ")
		s := tt.s
		s.Target = opAdapter(t, adapter(py, "numpy_ops.py", tt.args...))
		r, err := Run(context.Background(), s, Options{})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if (r.Certificate != nil) != (tt.rule == "") || r.Map.Rule != tt.rule && tt.rule != "" {
			t.Errorf("%s: certificate %v, map %q, diffs %+v; want %q", what, r.Certificate != nil, r.Map.Rule, r.Diffs, tt.rule)
		}
		if tt.rule == "" {
			if r.Differing != 0 || len(r.Map.Classes) != 1 || r.RowsCompared == 0 {
				t.Errorf("%s: %d of %d rows differing, %d classes", what, r.Differing, r.RowsCompared, len(r.Map.Classes))
			}
			continue
		}
		if len(r.Diffs) == 0 || r.Diffs[0].Value != tt.onset || !strings.Contains(r.Diffs[0].Words, tt.words) {
			t.Errorf("%s: diffs %+v, want the first at %d saying %q", what, r.Diffs, tt.onset, tt.words)
		}
	}
}
