package scan

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/ops"
)

// TestRunOpMaps: the exact maps of the op packages' controls. A tie
// broken the other way from 128 tokens on and a softmax sum whose order
// changes at 64 tokens are found at their exact onsets, with the tokens
// that changed experts; per-tensor FP8 scaling drifts when a row's
// neighbours' values are replaced and per-token scaling is certified; the
// oracle is certified.
func TestRunOpMaps(t *testing.T) {
	for _, tt := range []struct {
		s     OpSpec
		rule  string // "" certified
		words string // in the diff at the onset
		onset int
	}{
		{OpSpec{Target: "drift-moe-route-tie-high-128", To: 130, Dists: []string{"sensitive"}},
			"tokens <= 127 -> A, tokens >= 128 -> B", "35 (27.3%) changed experts (32 by a tie, 3 by a near-tie (within 1 ulp of the k-th logit))", 128},
		{OpSpec{Target: "drift-moe-route-sum-pairwise-64", To: 66, Dists: []string{"sensitive"}},
			"tokens <= 63 -> A, tokens >= 64 -> B", "2 (3.1%) changed experts (2 by a near-tie (within 1 ulp of the k-th logit))", 64},
		{OpSpec{Target: "oracle-moe_route", To: 40, Shape: ops.Shape{"experts": 8, "top_k": 2}, In: "bf16"}, "", "", 0},
		{OpSpec{Target: "quant-fp8-per-tensor", Dim: DimNeighbours, To: 12, Shape: ops.Shape{"hidden": 32}},
			"tokens <= 1 -> A, tokens >= 2 -> B", "depend on other rows' values", 2},
		{OpSpec{Target: "quant-fp8-per-token", Dim: DimNeighbours, To: 12, Shape: ops.Shape{"hidden": 32}}, "", "", 0},
		{OpSpec{Target: "quant-fp8-per-token-e5m2", To: 12, Shape: ops.Shape{"hidden": 32}, In: "bf16"}, "", "", 0},
	} {
		r, err := RunOp(context.Background(), tt.s)
		if err != nil {
			t.Fatalf("%s: %v", tt.s.Target, err)
		}
		if r.Certified != (tt.rule == "") || r.Map.Rule != tt.rule && tt.rule != "" {
			t.Errorf("%s: certified %v, map %q, want %q", tt.s.Target, r.Certified, r.Map.Rule, tt.rule)
		}
		if tt.rule == "" {
			if r.Differing != 0 || len(r.Map.Classes) != 1 {
				t.Errorf("%s: %d differing, %d classes", tt.s.Target, r.Differing, len(r.Map.Classes))
			}
			continue
		}
		if len(r.Diffs) == 0 || r.Diffs[0].Value != tt.onset || !strings.Contains(r.Diffs[0].Words, tt.words) {
			t.Errorf("%s: diffs %+v, want the first at %d saying %q", tt.s.Target, r.Diffs, tt.onset, tt.words)
		}
	}
}

func TestRunOpBadSpec(t *testing.T) {
	for _, s := range []OpSpec{
		{Target: "oracle-rmsnorm", To: 4},
		{Target: "oracle-moe_route", To: 0},
		{Target: "oracle-moe_route", To: 4, Dim: "kv"},
		{Target: "oracle-moe_route", To: 4, Shape: ops.Shape{"hidden": 4}},
		{Target: "oracle-moe_route", To: 4, Shape: ops.Shape{"top_k": 200}},
		{Target: "oracle-moe_route", To: 4, In: "fp16"},
		{Target: "quant-fp8-per-token", To: 4, Dists: []string{"sensitive"}},
	} {
		if _, err := RunOp(context.Background(), s); !errors.Is(err, ErrBadSpec) {
			t.Errorf("%+v: error %v, want a bad scan", s, err)
		}
	}
}
