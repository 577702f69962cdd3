package relate

import (
	"context"
	"fmt"
	"testing"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The conformance suite: one list of cases per op and relation, placed on
// the thresholds where kernels switch schedules (rows 32, 64/65, 256, 132
// requests, KV 49), run against every registered target. Invariant targets
// must pass every case of every relation; a drift model must fail at least
// one case of every relation in its Info.Expect, and a two-target pair
// marked Expect must fail at least one of its cases.

// suiteCase is a case of the suite without its targets.
func suiteCase(op spec.Op, rel string, sh spec.Shape, p spec.RelParams) spec.Case {
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: op, Relation: rel,
		Shape: sh, In: spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 7, Rel: p}
	if op == spec.OpRMSNorm {
		c.Eps = 1e-6
	}
	if op == spec.OpLogProb {
		c.Out = spec.FP32
	}
	return c
}

// suite returns the cases of op under relation rel.
func suite(op spec.Op, rel string) []spec.Case {
	var shapes []spec.Shape
	switch op {
	case spec.OpRMSNorm:
		shapes = []spec.Shape{{Rows: 3, Hidden: 300}, {Rows: 32, Hidden: 300}, {Rows: 257, Hidden: 300}}
	case spec.OpGEMM:
		shapes = []spec.Shape{{Rows: 3, Hidden: 40, N: 8}, {Rows: 65, Hidden: 40, N: 8}}
	case spec.OpLogProb:
		shapes = []spec.Shape{{Rows: 4, Vocab: 100}, {Rows: 33, Vocab: 70}}
	case spec.OpAttnPrefill:
		shapes = []spec.Shape{{Seqs: 2, SeqLen: 20, Heads: 2, KVHeads: 1, HeadDim: 64},
			{Seqs: 2, SeqLen: 60, Heads: 4, KVHeads: 2, HeadDim: 64}}
	case spec.OpAttnDecode:
		shapes = []spec.Shape{{Rows: 2, KV: 100, Heads: 2, KVHeads: 1, HeadDim: 64},
			{Rows: 132, KV: 70, Heads: 1, KVHeads: 1, HeadDim: 64}}
	}
	items := func(s spec.Shape) int {
		if op == spec.OpAttnPrefill {
			return s.Seqs
		}
		return s.Rows
	}
	var cs []spec.Case
	for _, sh := range shapes {
		n := items(sh)
		switch rel {
		case spec.RelBatchInvariance:
			for _, b := range []int{32, 65, 132, 256} {
				if op == spec.OpAttnPrefill && b > 8 {
					continue
				}
				cs = append(cs, suiteCase(op, rel, sh, spec.RelParams{Row: n - 1, Batch: b, Position: b / 2, PermSeed: 3}))
			}
			cs = append(cs, suiteCase(op, rel, sh, spec.RelParams{Row: 0, Batch: 3, Position: 2}))
		case spec.RelPadding:
			for i, f := range []string{"zeros", "normal", "nan", "huge", "copy"} {
				pad := []int{n + 1, 32, 65, 132, 256}[i]
				if op == spec.OpAttnPrefill {
					pad = n + 1 + i
				}
				cs = append(cs, suiteCase(op, rel, sh, spec.RelParams{Pad: max(pad, n), Filler: f}))
			}
		case spec.RelLogProbParity:
			for _, cmp := range []spec.DType{spec.BF16, spec.FP32} {
				c := suiteCase(op, rel, sh, spec.RelParams{})
				c.Compare = cmp
				cs = append(cs, c)
			}
		default:
			cs = append(cs, suiteCase(op, rel, sh, spec.RelParams{}))
		}
	}
	return cs
}

// conformance runs the suite of one pair and returns the findings.
func conformance(t *testing.T, p target.Pair) []*spec.Finding {
	t.Helper()
	var fs []*spec.Finding
	for _, c := range suite(p.Op, p.Relation) {
		c.Targets = p.Targets
		f, err := Check(context.Background(), c)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if f != nil {
			fs = append(fs, f)
		}
	}
	return fs
}

func TestConformance(t *testing.T) {
	expect := map[string]bool{} // drift model -> found by one of its relations
	for _, p := range Pairs() {
		p := p
		t.Run(fmt.Sprintf("%s/%s", p.Relation, p.Targets), func(t *testing.T) {
			fs := conformance(t, p)
			if !p.Expect {
				for _, f := range fs {
					t.Errorf("invariant pair fails: %s: %s", f.Kind, f.Message)
				}
				return
			}
			if len(fs) == 0 {
				t.Errorf("negative control %s was not found by its suite", p)
			}
			for _, name := range p.Targets {
				if len(fs) > 0 {
					expect[name] = true
				}
			}
		})
	}
	for _, name := range target.Names() {
		tg, err := target.Lookup(name)
		if err != nil {
			continue
		}
		if info := tg.Info(); !info.Invariant && !info.OnRequest && len(info.Expect) > 0 && !expect[name] {
			t.Errorf("drift model %s is in no pair that found it", name)
		}
	}
}

// TestDriftModelsKind: what each control is found as.
func TestDriftModelsKind(t *testing.T) {
	tests := []struct {
		targets []string
		rel     string
		op      spec.Op
		kind    spec.Kind
	}{
		{[]string{"drift-rmsnorm-te-mod32"}, spec.RelBatchInvariance, spec.OpRMSNorm, "mismatch"},
		{[]string{"drift-rmsnorm-vllm-256"}, spec.RelOracleParity, spec.OpRMSNorm, "mismatch"},
		{[]string{"drift-gemm-splitk-by-m"}, spec.RelPadding, spec.OpGEMM, "mismatch"},
		{[]string{"drift-decode-splits-by-batch"}, spec.RelBatchInvariance, spec.OpAttnDecode, "mismatch"},
		{[]string{"oracle-attn_prefill", "drift-attn-tile48"}, spec.RelPathParity, spec.OpAttnPrefill, "mismatch"},
		{[]string{"drift-logprob-train-bf16", "oracle-logprob"}, spec.RelLogProbParity, spec.OpLogProb, "misuse"},
		{[]string{"oracle-logprob", "drift-logprob-zerofill"}, spec.RelLogProbParity, spec.OpLogProb, "misuse"},
	}
	for _, tt := range tests {
		fs := conformance(t, target.Pair{Op: tt.op, Relation: tt.rel, Targets: tt.targets})
		if len(fs) == 0 {
			t.Errorf("%s %v: no finding", tt.rel, tt.targets)
			continue
		}
		if fs[0].Kind != tt.kind {
			t.Errorf("%s %v: kind %q, want %q (%s)", tt.rel, tt.targets, fs[0].Kind, tt.kind, fs[0].Message)
		}
	}
}
