package scan

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/ops/all"
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

// TestScanOpExecHeld: scans of items of the NumPy adapter's op-package
// ops held in the adapter (its hello's scan_ops, the kit's default) give
// the same map, classes, diffs, counts and certificate as the same scans
// with every batch a request (BITPARITY_SCAN_OPS=none withholds the
// field), in a fraction of the frames: the router that breaks ties
// highest index first from 40 tokens (a drift, its diff's words from
// fetched rows), the exact router and router GEMM, per-token FP8
// (certified) and per-tensor FP8 (rows differ from 2 tokens on), over
// tokens and over neighbours (the other rows replaced: the items and the
// replacements held together).
func TestScanOpExecHeld(t *testing.T) {
	py := pythontest.NumPy(t)
	for _, tt := range []struct {
		args []string
		s    spec.ScanSpec
		rule string // "" certified, "*" any map
	}{
		{[]string{"moe_route", "--moe-tie-high-from", "40"}, spec.ScanSpec{To: 44, Shape: dims("experts", 32, "top_k", 4), Dists: []spec.Dist{"sensitive"}},
			"tokens <= 39 -> A, tokens >= 40 -> B"},
		{[]string{"moe_route"}, spec.ScanSpec{To: 70, Shape: dims("experts", 16, "top_k", 4)}, ""},
		{[]string{"moe_router"}, spec.ScanSpec{To: 24, Shape: dims("hidden", 32, "experts", 16, "top_k", 2)}, ""},
		{[]string{"quant_fp8"}, spec.ScanSpec{To: 40, Shape: dims("hidden", 64), In: "bf16"}, ""},
		{[]string{"quant_fp8", "--fp8-scaling", "per_tensor"}, spec.ScanSpec{To: 12, Shape: dims("hidden", 32)}, "*"},
		{[]string{"quant_fp8", "--fp8-scaling", "per_tensor"}, spec.ScanSpec{Dim: DimNeighbours, To: 12, Shape: dims("hidden", 32)}, "tokens <= 1 -> A, tokens >= 2 -> B"},
		{[]string{"quant_fp8"}, spec.ScanSpec{Dim: DimNeighbours, To: 20, Shape: dims("hidden", 32)}, ""},
		{[]string{"moe_route", "--moe-tie-high-from", "8"}, spec.ScanSpec{Dim: DimNeighbours, To: 16, Shape: dims("experts", 16, "top_k", 4), Dists: []spec.Dist{"ties"}}, "*"},
	} {
		what := strings.Join(tt.args, " ") + " " + tt.s.Dim
		var res [2]*Result
		var frames [2]int
		for i, env := range []string{"", "BITPARITY_SCAN_OPS=none"} {
			s := tt.s
			var ot *external.OpTarget
			s.Target, ot = opAdapterEnv(t, adapter(py, "numpy_ops.py", tt.args...), env)
			if held := env == ""; ot.Holds() != held {
				t.Fatalf("%s %s: Holds %v, want %v", what, env, ot.Holds(), held)
			}
			r, err := Run(context.Background(), s, Options{})
			if err != nil {
				t.Fatalf("%s %s: %v", what, env, err)
			}
			res[i], frames[i] = r, ot.Process().Frames()
		}
		held, req := res[0], res[1]
		if (held.Certificate != nil) != (tt.rule == "") || tt.rule != "" && tt.rule != "*" && held.Map.Rule != tt.rule {
			t.Errorf("%s: certificate %v, map %q, diffs %+v; want %q", what, held.Certificate != nil, held.Map.Rule, held.Diffs, tt.rule)
		}
		sameScan(t, what+" held", held, what+" per request", req)
		if held.Certificate != nil && req.Certificate != nil {
			a, b := held.Certificate, req.Certificate
			if a.Schedule != b.Schedule || a.Batches != b.Batches || a.RowsCompared != b.RowsCompared || !reflect.DeepEqual(a.Hello, b.Hello) {
				t.Errorf("%s: certificates differ: %+v against %+v", what, a, b)
			}
		}
		if frames[0] >= frames[1] || tt.rule == "" && tt.s.Dim == "" && 4*frames[0] > frames[1] {
			t.Errorf("%s: %d frames held, %d per request: want fewer (a quarter at most for a certified scan of tokens)", what, frames[0], frames[1])
		}
	}
}

// opAdapterEnv is opAdapter with the environment variable env
// ("KEY=VALUE", "" none) set for the adapter; it returns the name and
// the op target.
func opAdapterEnv(t testing.TB, cmdline, env string) (string, *external.OpTarget) {
	t.Helper()
	name := fmt.Sprintf("exec:test-op-%d", adapterTargets.Add(1))
	opts := external.Options{Name: name}
	if env != "" {
		opts.Env = []string{env}
	}
	et, err := external.Add(cmdline, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { et.Close() })
	ot, ok := all.Lookup(name)
	if !ok {
		t.Fatalf("%s: not registered with the op packages' targets", name)
	}
	return name, ot.(*external.OpTarget)
}
