package detect

import (
	"context"
	"os"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

func TestMain(m *testing.M) {
	RegisterTargets() // drift-order-logprob-rows132, as the command registers it
	os.Exit(m.Run())
}

// budgets are the regression budgets: with boundary-seeking inputs, bf16
// outputs (log-probs compared in bf16) and taps off, every drift model
// must be found by its relation within this many generated cases for each
// listed seed. They are 2-5x the worst of those seeds measured for
// docs/detection.md, so a change that makes the nudge (or a relation)
// weaker fails here. drift-rmsnorm-vllm-256 drifts only at rows >= 256
// with hidden > 256, which only the campaign's big draws reach, so its
// measured runs take 15 to 147 cases on the campaign's stream (210 to 1146
// on the copy detect used before the big draws took the most balanced of
// 8); it is held to seed 2 (147) here and to a fixed straddling case in
// TestVLLMFixedCase.
// drift-logprob-train-bf16 is a comparison misuse that exists only when
// log-probs are compared in fp32, so a bf16 comparison cannot find it (by
// design); package fuzz's conformance suite holds it.
var budgets = []struct {
	model, relation string
	seeds           []uint64
	cases           int
}{
	{"drift-rmsnorm-te-mod32", spec.RelBatchInvariance, []uint64{1, 2, 3}, 60},
	{"drift-gemm-splitk-by-m", spec.RelBatchInvariance, []uint64{1, 2, 3}, 60},
	{"drift-order-logprob-rows132", spec.RelBatchInvariance, []uint64{1}, 200},
	{"drift-rmsnorm-vllm-256", spec.RelBatchInvariance, []uint64{2}, 500},
	{"drift-decode-splits-by-batch", spec.RelOracleParity, []uint64{1, 2, 3}, 60},
	{"drift-attn-tile48", spec.RelPathParity, []uint64{1, 2, 3}, 400},
	{"drift-logprob-zerofill", spec.RelLogProbParity, []uint64{1, 2, 3}, 20},
}

func TestDriftModelsFoundWithinBudget(t *testing.T) {
	for _, b := range budgets {
		t.Run(b.model, func(t *testing.T) {
			for _, seed := range b.seeds {
				r, err := Measure(context.Background(), Options{Model: b.model, Relation: b.relation,
					Dist: spec.DistBoundary, Seed: seed, MaxCases: b.cases})
				if err != nil {
					t.Fatal(err)
				}
				if !r.Found {
					t.Errorf("seed %d: not found within %d cases (boundary inputs, bf16, taps off)", seed, b.cases)
				} else if r.Finding.Kind == "crash" {
					t.Errorf("seed %d: a crash finding, want a mismatch or misuse: %s", seed, r.Finding.Message)
				}
			}
		})
	}
}

// TestVLLMFixedCase: a batch of 256 rows of hidden 512 (bf16 in and out)
// runs 256-thread blocks, the declared schedule 1024: with boundary inputs
// many rows differ in bf16, with normal inputs few.
func TestVLLMFixedCase(t *testing.T) {
	c := spec.Case{Version: 1, GenVersion: 1, Op: spec.OpRMSNorm, Relation: spec.RelOracleParity,
		Targets: []string{"drift-rmsnorm-vllm-256"}, Shape: spec.Shape{Rows: 256, Hidden: 512},
		In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Seed: 1}
	c.Dist = spec.DistNormal
	plain, _, err := RowsDiffering(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	c.Dist = spec.DistBoundary
	got, _, err := RowsDiffering(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if got < 16 || got < 4*plain {
		t.Errorf("rows differing of 256: boundary %d (want >= 16 and >= 4 x normal), normal %d", got, plain)
	}
}

// TestNoFindingOnInvariantTarget is the positive control: the oracle
// target under the same measurement finds nothing in 100 boundary cases.
func TestNoFindingOnInvariantTarget(t *testing.T) {
	r, err := Measure(context.Background(), Options{Model: "oracle-rmsnorm", Relation: spec.RelBatchInvariance,
		Dist: spec.DistBoundary, Seed: 1, MaxCases: 100})
	if err != nil {
		t.Fatal(err)
	}
	if r.Found {
		t.Errorf("the oracle target gave a finding: %s", r.Finding.Message)
	}
}

// TestLogProbRows132 checks the order-only log-prob model's policy at its
// threshold and that it changes only the reduction order: the max taps
// agree and the outputs of a 131-row batch stay within an fp32 ulp or two
// of the 132-row ones on the rows they share.
func TestLogProbRows132(t *testing.T) {
	tg, err := target.Lookup("drift-order-logprob-rows132")
	if err != nil {
		t.Fatal(err)
	}
	run := func(rows int) *target.Output {
		c := spec.Case{Version: 1, GenVersion: 1, Op: spec.OpLogProb, Shape: spec.Shape{Rows: rows, Vocab: 4096},
			In: spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 3}
		b, err := inputs.Of(c)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := target.LogProbRows132(b), rows >= 132; (got == target.OracleLogProbSchedule) != want {
			t.Errorf("%d rows: schedule %v", rows, got)
		}
		o, err := tg.Run(context.Background(), b, nil)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	a, b := run(131), run(132)
	sums := 0
	for i := 0; i < 131; i++ {
		if a.Taps[2*i] != b.Taps[2*i] {
			t.Fatalf("row %d: max differs (%g vs %g): more than the order changed", i, a.Taps[2*i], b.Taps[2*i])
		}
		if a.Taps[2*i+1] != b.Taps[2*i+1] {
			sums++
		}
		if d := oracle.ULPDistance(oracle.FP32, a.Values[i], b.Values[i]).ULPs; d > 2 {
			t.Errorf("row %d: log-probs %d fp32 ulps apart, want <= 2", i, d)
		}
	}
	if sums == 0 {
		t.Error("no row's sum of exponentials changed between 131 and 132 rows: the model does not drift")
	}
}
