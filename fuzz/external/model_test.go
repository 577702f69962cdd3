package external

import (
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
)

// startModel starts adapters/examples/numpy_model.py (args such as
// --drift) as a model route.
func startModel(t *testing.T, args ...string) *Model {
	t.Helper()
	tg, err := Add(adapterCmd(t, "adapters/examples/numpy_model.py", args...), "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	name := tg.Info().Name
	m, ok := LookupModel(name)
	if !ok {
		t.Fatalf("%s: not registered as a model route", name)
	}
	t.Cleanup(func() {
		m.Close()
		modelsMu.Lock()
		delete(models, name)
		modelsMu.Unlock()
	})
	return m
}

// modelCase is the minimal case a campaign on the drifting NumPy model
// found (4 requests of up to 37 tokens decoded together).
func modelCase(target string, rel string) spec.Case {
	return spec.Case{Version: 1, Op: ModelOp, Relation: rel, Targets: []string{target},
		Shape: spec.Shape{Rows: 1, Hidden: 256, N: 9, Vocab: 21, Seqs: 4, SeqLen: 37, Heads: 8, KVHeads: 2, HeadDim: 16},
		In:    spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistNormal, Seed: 8205980742264380773, GenVersion: 1,
		Rel: spec.RelParams{Pad: 128}}
}

// TestModelRoute: the NumPy reference decoder's training path and engine
// agree bitwise on log-probs and every tap; with decode attention summed
// backwards for two or more live requests (--drift) path parity names
// L0.attention and maps the drift over the batch; comparing in fp32 or
// unreported positions is a misuse; fuzz.Check routes model cases.
func TestModelRoute(t *testing.T) {
	ctx := context.Background()
	inv := startModel(t)
	drift := startModel(t, "--drift")
	for _, rel := range []string{spec.RelLogProbParity, spec.RelPathParity} {
		f, err := fuzz.Check(ctx, modelCase(inv.Name(), rel))
		if err != nil || f != nil {
			t.Fatalf("invariant model, %s: finding %+v, error %v", rel, f, err)
		}
	}
	f, err := fuzz.Check(ctx, modelCase(drift.Name(), spec.RelPathParity))
	if err != nil || f == nil {
		t.Fatalf("drifting model under path parity: finding %v, error %v", f, err)
	}
	for _, want := range []string{"first divergence at L0.attention", "in bf16", "engine in a decode step", "class A agrees with the training path"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	if f.DriftMap == nil || f.DriftMap.Rule != "batch <= 1 -> A, batch >= 2 -> B" {
		t.Errorf("drift map = %+v, want batch <= 1 -> A, batch >= 2 -> B", f.DriftMap)
	}
	if !strings.Contains(f.Repro, "--exec '") {
		t.Errorf("repro line without its --exec: %s", f.Repro)
	}
	if f, err := fuzz.Check(ctx, modelCase(drift.Name(), spec.RelLogProbParity)); err != nil || f != nil {
		t.Errorf("log-prob parity: the planted drift is hidden by bf16 here, want no finding; got %+v, %v", f, err)
	}
	c := modelCase(inv.Name(), spec.RelLogProbParity)
	c.Compare = spec.FP32
	if f, err := fuzz.Check(ctx, c); err != nil || f == nil || f.Kind != "misuse" || !strings.Contains(f.Message, "training dtype is bf16") {
		t.Errorf("compare fp32: want a misuse finding, got %+v, %v", f, err)
	}
	c = modelCase(inv.Name(), spec.RelLogProbParity)
	c.Targets = []string{"exec:nope.transformer"}
	if _, err := fuzz.Check(ctx, c); err == nil || !strings.Contains(err.Error(), "--exec") {
		t.Errorf("unknown route: error %v, want one naming --exec", err)
	}
}

// TestModelCampaign: a short campaign on the invariant route finds nothing
// and counts its cases.
func TestModelCampaign(t *testing.T) {
	m := startModel(t)
	res, err := ModelCampaign{Target: m.Name(), Seed: 3, MaxCases: 3}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Cases != 3 || len(res.Findings) != 0 || len(res.Targets) != 1 || res.Targets[0].Op != ModelOp {
		t.Fatalf("campaign: %d cases, findings %+v, targets %+v", res.Cases, res.Findings, res.Targets)
	}
}
