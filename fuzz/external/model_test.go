package external

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
)

// startModel starts adapters/examples/numpy_model.py (args such as
// --drift) as a model route; a name (the route is exec:numpy-model.transformer
// with or without --drift) lets a test start both.
func startModel(t *testing.T, name string, args ...string) *Model {
	t.Helper()
	tg, err := Add(adapterCmd(t, "adapters/examples/numpy_model.py", args...), "", Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	name = tg.Info().Name
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
// L0.attention (fuzz.Check routes model cases and runs the plan once) and
// the campaign's mapped check maps the drift over the batch; comparing in
// fp32 or unreported positions is a misuse.
func TestModelRoute(t *testing.T) {
	ctx := context.Background()
	inv := startModel(t, "")
	drift := startModel(t, "exec:numpy-model-drift.transformer", "--drift")
	src, err := ModelSource(inv.Name(), nil) // checks the case of any started route
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{spec.RelLogProbParity, spec.RelPathParity} {
		f, err := fuzz.Check(ctx, modelCase(inv.Name(), rel), src)
		if err != nil || f != nil {
			t.Fatalf("invariant model, %s: finding %+v, error %v", rel, f, err)
		}
	}
	f, err := fuzz.Check(ctx, modelCase(drift.Name(), spec.RelPathParity), src)
	if err != nil || f == nil || f.DriftMap != nil || !strings.Contains(f.Message, "first divergence at L0.attention") {
		t.Fatalf("drifting model under path parity, one check: finding %+v, error %v; want one without a drift map", f, err)
	}
	if want := (spec.Site{Layer: -1, Op: "L0.attention"}); f.Site == nil || *f.Site != want {
		t.Errorf("site %+v, want %+v", f.Site, want)
	}
	if err := mapModel(ctx, f); err != nil { // as the campaign maps its minimal case
		t.Fatal(err)
	}
	if err != nil || f == nil {
		t.Fatalf("drifting model under path parity, mapped: finding %v, error %v", f, err)
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
	if f, err := fuzz.Check(ctx, modelCase(drift.Name(), spec.RelLogProbParity), src); err != nil || f != nil {
		t.Errorf("log-prob parity: the planted drift is hidden by bf16 here, want no finding; got %+v, %v", f, err)
	}
	c := modelCase(inv.Name(), spec.RelLogProbParity)
	c.Compare = spec.FP32
	if f, err := fuzz.Check(ctx, c, src); err != nil || f == nil || f.Kind != "misuse" || !strings.Contains(f.Message, "training dtype is bf16") {
		t.Errorf("compare fp32: want a misuse finding, got %+v, %v", f, err)
	}
	c = modelCase(inv.Name(), spec.RelLogProbParity)
	c.Targets = []string{"exec:nope.transformer"}
	if _, err := fuzz.Check(ctx, c, src); err == nil || !strings.Contains(err.Error(), "--exec") {
		t.Errorf("unknown route: error %v, want one naming --exec", err)
	}
	if _, err := ModelSource("exec:nope.transformer", nil); err == nil || !strings.Contains(err.Error(), "--exec") {
		t.Errorf("source of an unknown route: error %v, want one naming --exec", err)
	}
	if _, err := fuzz.Check(ctx, modelCase(inv.Name(), spec.RelLogProbParity)); err == nil {
		t.Error("a model case checked without its source: no error (a hidden registry?)")
	}
}

// TestModelCampaign: a short fuzz.Campaign on the invariant route's source
// finds nothing and counts its cases under the route's name.
func TestModelCampaign(t *testing.T) {
	m := startModel(t, "")
	c, err := RouteCampaign([]string{m.Name()}, nil, time.Minute, 3)
	if err != nil {
		t.Fatal(err)
	}
	if c.Workers != 1 || c.Grace != RouteGrace || len(c.Sources) != 1 || c.Sources[0].Share != 1 {
		t.Fatalf("RouteCampaign: %d worker(s), grace %s, %d source(s)", c.Workers, c.Grace, len(c.Sources))
	}
	if _, err := RouteCampaign([]string{m.Name(), "exec:none.transformer"}, nil, time.Minute, 3); err == nil {
		t.Error("RouteCampaign of a route not started: no error")
	}
	c.MaxCases = 3
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Cases != 3 || len(res.Findings) != 0 || len(res.Targets) != 1 || res.Targets[0].Op != ModelOp ||
		res.Targets[0].Target != m.Name() || len(res.Targets[0].Relations) != 2 {
		t.Fatalf("campaign: %d cases, findings %+v, targets %+v", res.Cases, res.Findings, res.Targets)
	}
}

// TestValidateModelCase: what a model case may ask of an adapter is
// bounded by spec's model limits, and each refusal names its field.
func TestValidateModelCase(t *testing.T) {
	ok := modelCase("exec:m.transformer", spec.RelPathParity)
	if err := ValidateModelCase(ok); err != nil {
		t.Fatalf("the campaign's minimal case: %v", err)
	}
	for _, tc := range []struct {
		name, field string
		mod         func(c *spec.Case)
	}{
		{"single op", "op", func(c *spec.Case) { c.Op = spec.OpRMSNorm }},
		{"explicit data", "data", func(c *spec.Case) { c.Data = &spec.Data{} }},
		{"two targets", "targets", func(c *spec.Case) { c.Targets = append(c.Targets, "exec:n.transformer") }},
		{"single-op relation", "relation", func(c *spec.Case) { c.Relation = spec.RelBatchInvariance }},
		{"no layers", "shape.rows", func(c *spec.Case) { c.Shape.Rows = 0 }},
		{"too many layers", "shape.rows", func(c *spec.Case) { c.Shape.Rows = spec.MaxModelLayers + 1 }},
		{"negative vocab", "shape.vocab", func(c *spec.Case) { c.Shape.Vocab = -1 }},
		{"too many requests", "shape.seqs", func(c *spec.Case) { c.Shape.Seqs = spec.MaxModelRequests + 1 }},
		{"no response", "shape.seq_len", func(c *spec.Case) { c.Shape.SeqLen = 1 }},
		{"gqa", "shape.heads", func(c *spec.Case) { c.Shape.Heads, c.Shape.KVHeads = 6, 4 }},
		{"kv", "shape.kv", func(c *spec.Case) { c.Shape.KV = 16 }},
		{"parameters", "shape", func(c *spec.Case) { c.Shape.Vocab, c.Shape.Hidden = spec.MaxModelVocab, spec.MaxModelHidden }},
		{"activations", "shape", func(c *spec.Case) {
			c.Shape.Seqs, c.Shape.SeqLen, c.Shape.Vocab, c.Shape.Hidden = spec.MaxModelRequests, spec.MaxModelSeqLen, 1<<12, 64
		}},
		{"pad", "rel.pad", func(c *spec.Case) { c.Rel.Pad = spec.MaxModelPad + 1 }},
		{"mask past the plan", "rel.mask[1]", func(c *spec.Case) { c.Rel.Mask = []int{0, 4 * 36} }},
		{"filler", "rel.filler", func(c *spec.Case) { c.Rel.Filler = "nan" }},
		{"batch", "rel.batch", func(c *spec.Case) { c.Rel.Batch = 3 }},
	} {
		c := ok
		c.Targets = slices.Clone(ok.Targets)
		tc.mod(&c)
		err := ValidateModelCase(c)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.field)
		}
		if _, perr := PlanOf(c); perr == nil {
			t.Errorf("%s: PlanOf accepted what ValidateModelCase refuses", tc.name)
		}
	}
}
