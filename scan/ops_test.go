package scan

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestRunOpMaps: the exact maps of the op packages' controls. A tie
// broken the other way from 128 tokens on and a softmax sum whose order
// changes at 64 tokens are found at their exact onsets, with the tokens
// that changed experts; per-tensor FP8 scaling drifts when a row's
// neighbours' values are replaced and per-token scaling is certified; the
// oracle is certified.
func TestRunOpMaps(t *testing.T) {
	for _, tt := range []struct {
		s     spec.ScanSpec
		rule  string // "" certified
		words string // in the diff at the onset
		onset int
	}{
		{spec.ScanSpec{Target: "drift-moe-route-tie-high-128", To: 130, Dists: []spec.Dist{"sensitive"}},
			"tokens <= 127 -> A, tokens >= 128 -> B", "35 (27.3%) changed experts (32 by a tie, 3 by a near-tie (within 1 ulp of the k-th logit))", 128},
		{spec.ScanSpec{Target: "drift-moe-route-sum-pairwise-64", To: 66, Dists: []spec.Dist{"sensitive"}},
			"tokens <= 63 -> A, tokens >= 64 -> B", "2 (3.1%) changed experts (2 by a near-tie (within 1 ulp of the k-th logit))", 64},
		{spec.ScanSpec{Target: "oracle-moe_route", To: 40, Shape: dims("experts", 8, "top_k", 2), In: "bf16"}, "", "", 0},
		{spec.ScanSpec{Target: "quant-fp8-per-tensor", Dim: DimNeighbours, To: 12, Shape: dims("hidden", 32)},
			"tokens <= 1 -> A, tokens >= 2 -> B", "depend on other rows' values", 2},
		{spec.ScanSpec{Target: "quant-fp8-per-token", Dim: DimNeighbours, To: 12, Shape: dims("hidden", 32)}, "", "", 0},
		{spec.ScanSpec{Target: "quant-fp8-per-token-e5m2", To: 12, Shape: dims("hidden", 32), In: "bf16"}, "", "", 0},
	} {
		r, err := Run(context.Background(), tt.s, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tt.s.Target, err)
		}
		if (r.Certificate != nil) != (tt.rule == "") || r.Map.Rule != tt.rule && tt.rule != "" {
			t.Errorf("%s: certificate %v, map %q, want %q", tt.s.Target, r.Certificate != nil, r.Map.Rule, tt.rule)
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
	for _, s := range []spec.ScanSpec{
		{Target: "oracle-rmsnorm", To: 4},
		{Target: "oracle-moe_route", To: 0},
		{Target: "oracle-moe_route", To: 4, Dim: "kv"},
		{Target: "oracle-moe_route", To: 4, Shape: dims("hidden", 4)},
		{Target: "oracle-moe_route", To: 4, Shape: dims("top_k", 200)},
		{Target: "oracle-moe_route", To: 4, Shape: spec.Shape{Hidden: 8}},
		{Target: "oracle-moe_route", To: 4, Out: "bf16"},
		{Target: "oracle-moe_route", To: 4, Op: "quant_fp8"},
		{Target: "oracle-moe_route", To: 4, GenVersion: 1},
		{Target: "oracle-moe_route", To: 4, In: "fp16"},
		{Target: "quant-fp8-per-token", To: 4, Dists: []spec.Dist{"sensitive"}},
	} {
		if _, err := Run(context.Background(), s, Options{}); !errors.Is(err, ErrBadSpec) {
			t.Errorf("%+v: error %v, want a bad scan", s, err)
		}
	}
}

// dims is a shape of an op package's op: name, value, name, value, ...
func dims(kv ...any) spec.Shape {
	d := map[string]int{}
	for i := 0; i < len(kv); i += 2 {
		d[kv[i].(string)] = kv[i+1].(int)
	}
	return spec.Shape{Dims: d}
}

// TestRunOpRecheck: a scan of an op package's target is a scan as any
// other: its record has the scan results schema's verdict and the op's
// words, Rerun reruns its drift, and Recheck holds its certificate,
// turning it invalid when the target drifts or declares another policy.
func TestRunOpRecheck(t *testing.T) {
	ctx := context.Background()
	s := spec.ScanSpec{Target: "drift-moe-route-tie-high-128", From: 120, To: 130, Dists: []spec.Dist{"sensitive"}, Seed: 1}
	r, err := Run(ctx, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := r.Record()
	if rec.Verdict != spec.ScanDrift || rec.Scan.Op != "moe_route" || len(rec.Diffs) == 0 || rec.Diffs[0].Value != 128 ||
		rec.Diffs[0].FirstRow != 0 || !strings.Contains(rec.Diffs[0].Words, "changed experts") {
		t.Errorf("record: %+v", rec)
	}
	again, err := Rerun(ctx, rec.Scan, Options{})
	if err != nil || again.Verdict != spec.ScanDrift || again.Map.Rule != rec.Map.Rule {
		t.Errorf("rerun: %v, %+v, want the map %q", err, again, rec.Map.Rule)
	}

	o, err := Run(ctx, spec.ScanSpec{Target: "oracle-moe_route", To: 130, Shape: dims("experts", 16, "top_k", 4), Dists: []spec.Dist{"sensitive"}}, Options{})
	if err != nil || o.Certificate == nil {
		t.Fatalf("oracle: %v, %+v", err, o)
	}
	c := *o.Certificate
	if c.Schedule != "tie=lowest sum=sequential" || o.Record().Verdict != spec.ScanCertified {
		t.Errorf("certificate: schedule %q, verdict %q", c.Schedule, o.Record().Verdict)
	}
	for _, tt := range []struct {
		edit func(*spec.Certificate)
		why  string // "" holds
	}{
		{func(*spec.Certificate) {}, ""},
		{func(c *spec.Certificate) { c.Scan.Target = "drift-moe-route-tie-high-128" }, "tokens <= 127 -> A, tokens >= 128 -> B"},
		{func(c *spec.Certificate) { c.Schedule = "tie=highest sum=sequential" }, `the target now declares policy "tie=lowest sum=sequential"`},
	} {
		in := c
		tt.edit(&in)
		got, _, err := Recheck(ctx, in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if tt.why == "" && got.Status.State != spec.CertValid || tt.why != "" && (got.Status.State != spec.CertInvalid || !strings.Contains(got.Status.Reason, tt.why)) {
			t.Errorf("recheck of %s (%s): %+v, want %q", in.Scan.Target, in.Schedule, got.Status, tt.why)
		}
	}
}
