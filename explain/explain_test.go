package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// driftCase is a drift model's finding reduced to what explain reads: the
// case, the drift map's classes (one value each) and rule, and the true
// policy.
type driftCase struct {
	target string
	c      spec.Case
	dim    string
	rule   string
	values map[string]int // label -> probed value
	truth  func(v int) oracle.Schedule
}

func batchAt(op spec.Op, v, heads int) *target.Batch {
	b := &target.Batch{Op: op}
	switch op {
	case spec.OpRMSNorm:
		b.Input = &oracle.RMSNormInput{Rows: v}
	case spec.OpGEMM:
		b.Input = &oracle.GEMMInput{M: v}
	case spec.OpAttnDecode:
		b.Input = &oracle.DecodeInput{K: make([][]float32, v), Heads: heads}
	}
	return b
}

var driftCases = []driftCase{
	{
		target: "drift-rmsnorm-te-mod32",
		c:      spec.Case{Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance, Shape: spec.Shape{Rows: 31, Hidden: 1024}, In: "bf16", Out: "bf16"},
		dim:    "rows", rule: "rows % 32 == 0 -> B, otherwise -> A", values: map[string]int{"A": 31, "B": 32},
		truth: func(v int) oracle.Schedule { return target.TERMSNormMod32(batchAt(spec.OpRMSNorm, v, 0)) },
	},
	{
		target: "drift-rmsnorm-vllm-256",
		c:      spec.Case{Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance, Shape: spec.Shape{Rows: 255, Hidden: 2048}, In: "bf16", Out: "bf16"},
		dim:    "rows", rule: "rows <= 255 -> A, rows >= 256 -> B", values: map[string]int{"A": 255, "B": 256},
		truth: func(v int) oracle.Schedule { return target.VLLMRMSNorm256(batchAt(spec.OpRMSNorm, v, 0)) },
	},
	{
		target: "drift-gemm-splitk-by-m",
		c:      spec.Case{Op: spec.OpGEMM, Relation: spec.RelBatchInvariance, Shape: spec.Shape{Rows: 64, Hidden: 96, N: 4}, In: "bf16", Out: "bf16"},
		dim:    "rows", rule: "rows <= 64 -> A, rows >= 65 -> B", values: map[string]int{"A": 64, "B": 65},
		truth: func(v int) oracle.Schedule { return target.GEMMSplitKByM(batchAt(spec.OpGEMM, v, 0)) },
	},
	{
		target: "drift-decode-splits-by-batch",
		c:      spec.Case{Op: spec.OpAttnDecode, Relation: spec.RelBatchInvariance, Shape: spec.Shape{Rows: 8, KV: 200, Heads: 4, KVHeads: 2, HeadDim: 16}, In: "bf16", Out: "bf16"},
		dim:    "batch", rule: "batch <= 32 -> A, batch >= 33 -> B", values: map[string]int{"A": 32, "B": 33},
		truth: func(v int) oracle.Schedule { return target.DecodeSplitsByBatch(batchAt(spec.OpAttnDecode, v, 4)) },
	},
}

func finding(d driftCase) *spec.Finding {
	c := d.c
	c.Targets = []string{d.target}
	c.Dist = spec.DistNormal
	c.GenVersion = spec.GeneratorVersion
	dm := &spec.DriftMap{Dim: d.dim, Rule: d.rule}
	for _, l := range []string{"A", "B"} {
		dm.Classes = append(dm.Classes, spec.DriftClass{Label: l, Values: []int{d.values[l]}})
	}
	return &spec.Finding{Case: c, DriftMap: dm}
}

func TestDriftModels(t *testing.T) {
	for _, d := range driftCases {
		t.Run(d.target, func(t *testing.T) {
			ex, err := Finding(context.Background(), finding(d), Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Log(ex.Text())
			for _, c := range ex.Classes {
				truth := fmt.Sprint(d.truth(c.Value))
				tg := c.Targets[0]
				if len(tg.Matches) != 1 || !slices.Contains(tg.Matches[0].Schedules, truth) {
					t.Errorf("class %s: want one group holding %s, got %s", c.Label, truth, tg.Describe())
				}
			}
		})
	}
}

// TestTile48 explains both targets of the path-parity finding of
// drift-attn-tile48 against the oracle (tile 64) on both sides of its map.
func TestTile48(t *testing.T) {
	f := &spec.Finding{
		Case: spec.Case{Op: spec.OpAttnPrefill, Relation: spec.RelPathParity, Targets: []string{"oracle-attn_prefill", "drift-attn-tile48"},
			Shape: spec.Shape{Seqs: 1, SeqLen: 49, Heads: 2, KVHeads: 1, HeadDim: 16}, In: "bf16", Out: "bf16", Dist: spec.DistNormal, GenVersion: spec.GeneratorVersion},
		DriftMap: &spec.DriftMap{Dim: "kv", Rule: "kv <= 48 -> A, kv >= 49 -> B", Classes: []spec.DriftClass{
			{Label: "A", Values: []int{48}}, {Label: "B", Values: []int{49}}}},
	}
	ex, err := Finding(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(ex.Text())
	want := map[string][2]string{ // class -> the canonical schedule of each target
		"A": {"tile=48 splits=1", "tile=48 splits=1"},
		"B": {"tile=49 splits=1", "tile=48 splits=1"},
	}
	truth := [2]string{target.OracleAttentionSchedule.String(), target.Tile48.String()}
	for _, c := range ex.Classes {
		for i, tg := range c.Targets {
			if len(tg.Matches) != 1 || tg.Matches[0].Orders != 1 || tg.Matches[0].Schedules[0] != want[c.Label][i] || !slices.Contains(tg.Matches[0].Schedules, truth[i]) {
				t.Errorf("class %s, %s: want one order, %s first, holding %s; got %s", c.Label, tg.Name, want[c.Label][i], truth[i], tg.Describe())
			}
		}
	}
	if !strings.Contains(ex.Words, "kv >= 49: [oracle-attn_prefill tile=49 splits=1") {
		t.Errorf("words: %s", ex.Words)
	}
}

// reversed is an RMSNorm whose sum of squares runs from the last element
// to the first: an order no schedule of the space has.
type reversed struct{}

func (reversed) Info() target.Info {
	return target.Info{Name: "test-rmsnorm-reversed", Op: spec.OpRMSNorm, Device: "cpu"}
}

func (reversed) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	in := *b.Input.(*oracle.RMSNormInput)
	H := in.Hidden
	rev := func(xs []float32) []float32 {
		out := slices.Clone(xs)
		for r := 0; r < len(out)/H; r++ {
			slices.Reverse(out[r*H : (r+1)*H])
		}
		return out
	}
	in.X, in.W = rev(in.X), rev(in.W)
	o, err := target.OracleWith(spec.OpRMSNorm, oracle.RMSNormSchedule{Reduce: oracle.Sequential}).Run(ctx, &target.Batch{Op: b.Op, In: b.In, Out: b.Out, Input: &in}, rows)
	if err != nil {
		return nil, err
	}
	o.Values = rev(o.Values)
	return o, nil
}

func init() {
	target.Register("test-rmsnorm-reversed", func() (target.Target, error) { return reversed{}, nil })
}

// TestOutsideTheSpace: a kernel whose order is not a schedule of the space
// gets "no schedule".
func TestOutsideTheSpace(t *testing.T) {
	f := &spec.Finding{
		Case: spec.Case{Op: spec.OpRMSNorm, Relation: spec.RelOracleParity, Targets: []string{"test-rmsnorm-reversed"},
			Shape: spec.Shape{Rows: 4, Hidden: 512}, In: "bf16", Out: "bf16", Dist: spec.DistNormal, GenVersion: spec.GeneratorVersion},
		DriftMap: &spec.DriftMap{Dim: "rows", Rule: "every rows -> A", Classes: []spec.DriftClass{{Label: "A", Values: []int{4}}}},
	}
	ex, err := Finding(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(ex.Text())
	if m := ex.Classes[0].Targets[0].Matches; len(m) != 0 {
		t.Fatalf("a reversed sum matched %v", m)
	}
	if want := "every rows: no schedule of the model space reproduces this class"; ex.Words != want {
		t.Errorf("words %q, want %q", ex.Words, want)
	}
}

// TestTensorCoreGEMM: a GEMM that chains the H200 tensor-core step with
// split-K 2 is told apart from the fma chains and the other splits.
func TestTensorCoreGEMM(t *testing.T) {
	truth := oracle.GEMMSchedule{SplitK: 2, Combine: oracle.CrossSequential, MMA: oracle.MMABF16}
	c := spec.Case{Op: spec.OpGEMM, Shape: spec.Shape{Rows: 8, Hidden: 160, N: 4}, In: "bf16", Out: "bf16", Dist: spec.DistNormal, GenVersion: spec.GeneratorVersion}
	got, err := Infer(context.Background(), target.OracleWith(spec.OpGEMM, truth), c, "rows", 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	// split-K 2 with a tree combine is the same computation (p0 + p1)
	if len(got.Matches) != 1 || got.Matches[0].Orders != 1 || got.Matches[0].Schedules[0] != truth.String() {
		t.Fatalf("want exactly the order of %s, got %s", truth, got.Describe())
	}
}

// TestMapIsCampaigns: a finding without a map is mapped by the campaign's
// mapper (mapper.Map): its own data and the mapper's random draws, and
// the rule a campaign prints.
func TestMapIsCampaigns(t *testing.T) {
	d := driftCases[2] // gemm split-K by M, the smallest
	f := finding(d)
	f.DriftMap = nil
	f.Kind, f.Relation, f.TargetA = spec.KindMismatch, f.Case.Relation, d.target
	f.Case.Rel.Batch = 1
	dm, err := Map(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if dm.Draws < 2 || dm.Rule != d.rule {
		t.Errorf("map over %d draws, rule %q; want the campaign's draws and %q", dm.Draws, dm.Rule, d.rule)
	}
}

// TestOpPackageOp: a finding of an op package's op (moe_router) has no
// reduction orders here; Finding says so instead of failing on its target.
func TestOpPackageOp(t *testing.T) {
	f := &spec.Finding{Case: spec.Case{Op: "moe_router", Targets: []string{"drift-moe-router-splitk-by-m"}},
		DriftMap: &spec.DriftMap{Dim: "rows", Classes: []spec.DriftClass{{Label: "A", Values: []int{1}}}}}
	if _, err := Finding(context.Background(), f, Options{}); err == nil || !strings.Contains(err.Error(), "op moe_router has no reduction orders") {
		t.Errorf("explain of a moe_router finding: %v", err)
	}
}
