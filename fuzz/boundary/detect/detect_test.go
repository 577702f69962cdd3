package detect

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// budgets are the regression budgets: with boundary-seeking inputs, bf16
// outputs and taps off, every drift model must be found by its relation
// within this many cases for each of the seeds 1..3. They are about 4x the
// worst of 5 seeds measured for docs/detection.md, so a change that makes
// the nudge (or a relation) weaker fails here.
var budgets = []struct {
	model, relation string
	cases           int
}{
	{"drift-rmsnorm-te-mod32", spec.RelBatchInvariance, 60},
	{"drift-gemm-splitk-by-m", spec.RelBatchInvariance, 60},
	{"drift-order-logprob-rows132", spec.RelBatchInvariance, 200},
	{"drift-rmsnorm-vllm-256", spec.RelBatchInvariance, 400},
	{"drift-decode-splits-by-batch", spec.RelOracleParity, 60},
	{"drift-attn-tile48", spec.RelPathParity, 1200},
	{"drift-logprob-train-bf16", spec.RelLogProbParity, 60},
	{"drift-logprob-zerofill", spec.RelLogProbParity, 60},
}

func TestDriftModelsFoundWithinBudget(t *testing.T) {
	for _, b := range budgets {
		t.Run(b.model, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
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
	tg, err := fuzz.Lookup("drift-order-logprob-rows132")
	if err != nil {
		t.Fatal(err)
	}
	run := func(rows int) *fuzz.Output {
		c := spec.Case{Version: 1, GenVersion: 1, Op: spec.OpLogProb, Shape: spec.Shape{Rows: rows, Vocab: 4096},
			In: spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 3}
		b, err := fuzz.Inputs(c)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := LogProbRows132(b), rows >= 132; (got == fuzz.OracleLogProbSchedule) != want {
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
