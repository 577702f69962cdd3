package fuzz

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz/internal/casecost"
	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestCampaignControls runs a short campaign over every pair: invariant
// pairs must give no finding, every finding must be on a pair that expects
// one (a negative control), and the controls that small cases reach must be
// found with the onset their drift model has. (The full proof, every
// control within 60 s with >= 10^4 invariant cases, is `bitparity run`.)
func TestCampaignControls(t *testing.T) {
	var got []spec.Finding
	c := &Campaign{Duration: 8 * time.Second, Seed: 3, OnFinding: func(f spec.Finding) { got = append(got, f) }}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Cases < 100 || len(res.Findings) != len(got) {
		t.Fatalf("%d cases, %d findings, %d reported", res.Cases, len(res.Findings), len(got))
	}
	expect := map[string]bool{}
	for _, p := range relate.Pairs() {
		if p.Expect {
			expect[p.String()] = true
		}
	}
	rules := map[string]string{}
	for _, f := range res.Findings {
		p := target.Pair{Relation: f.Relation, Targets: f.Case.Targets}
		if !expect[p.String()] {
			t.Errorf("finding on a pair that must hold: %s: %s %s", p, f.Kind, f.Message)
		}
		if f.Signature == "" || f.Repro == "" || f.Elapsed <= 0 {
			t.Errorf("finding %s lacks signature, repro or time", p)
		}
		if m := f.DriftMap; m != nil { // every dimension's rule (padding maps the padded size first)
			model := f.Case.Targets[len(f.Case.Targets)-1]
			rules[model] += " | " + m.Rule
			for _, a := range m.Also {
				rules[model] += " | " + a.Rule
			}
		}
	}
	for _, ts := range res.Targets {
		if ts.Invariant && ts.Findings > 0 {
			t.Errorf("invariant target %s: %d findings", ts.Target, ts.Findings)
		}
	}
	want := map[string]string{
		"drift-gemm-splitk-by-m":       "rows <= 64 -> A, rows >= 65 -> B",
		"drift-rmsnorm-te-mod32":       "rows % 32 == 0",
		"drift-decode-splits-by-batch": "batch >= 132",
	}
	for model, rule := range want {
		if !strings.Contains(rules[model], rule) {
			t.Errorf("%s: drift rule %q, want %q", model, rules[model], rule)
		}
	}
}

func TestCampaignFilters(t *testing.T) {
	c := &Campaign{Duration: time.Second, Targets: []string{"oracle-gemm"}, Relations: []string{spec.RelDeterminism}, MaxCases: 50}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Cases != 50 || len(res.Targets) != 1 || res.Targets[0].Target != "oracle-gemm" ||
		len(res.Targets[0].Relations) != 1 || len(res.Findings) != 0 {
		t.Fatalf("got %d cases, targets %+v, %d findings", res.Cases, res.Targets, len(res.Findings))
	}
	for _, bad := range []*Campaign{{Targets: []string{"nope"}}, {Relations: []string{"nope"}},
		{Targets: []string{"oracle-gemm"}, Relations: []string{spec.RelLogProbParity}}} {
		if _, err := bad.Run(context.Background()); err == nil {
			t.Errorf("campaign %+v: no error", bad)
		}
	}
}

func TestCaseCostGrows(t *testing.T) {
	small := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance,
		Shape: spec.Shape{Rows: 1, Hidden: 64}, In: spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 7, Eps: 1e-6, Rel: spec.RelParams{Batch: 1}}
	big := small
	big.Shape.Rows, big.Rel.Batch = 4548, 4548
	if casecost.Of(small) >= casecost.Of(big) || casecost.Of(big) < casecost.Big {
		t.Fatalf("costs %d, %d", casecost.Of(small), casecost.Of(big))
	}
}
