package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/spec"
)

// modelCase is a model-route case as a model campaign stores it (the
// minimal case the NumPy route's planted drift gave).
func modelCase() spec.Case {
	return spec.Case{Version: 1, Op: spec.OpModel, Relation: spec.RelPathParity, Targets: []string{"exec:numpy-model.transformer"},
		Shape: spec.Shape{Rows: 1, Hidden: 256, N: 9, Vocab: 21, Seqs: 4, SeqLen: 37, Heads: 8, KVHeads: 2, HeadDim: 16},
		In:    spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistNormal, Seed: 8205980742264380773, GenVersion: 1,
		Rel: spec.RelParams{Pad: 128}}
}

// modelFile is modelCase's file with its finding and its recorded adapter.
func modelFile() *File {
	c := modelCase()
	fd := &spec.Finding{Case: c, Kind: spec.KindMismatch, Relation: c.Relation, TargetA: c.Targets[0], TargetB: c.Targets[0],
		Row: 17, Col: 113, A: spec.Value{Hex: "be1e"}, B: spec.Value{Hex: "be1f"}, ULPs: 1,
		Message:  "first divergence at L0.attention (tap 1)",
		DriftMap: &spec.DriftMap{Dim: "batch", Rule: "batch <= 1 -> A, batch >= 2 -> B"}}
	f := NewFile(c, fd, spec.Env{Bitparity: "t"}, "campaign")
	f.Adapters = []spec.Adapter{{Target: c.Targets[0], Name: "numpy-model.transformer", Device: "cpu",
		About: "numpy reference decoder", Exec: "python3 adapters/examples/numpy_model.py --drift"}}
	return f
}

// TestModelCaseFile: a model-route finding is a case file like any other
// (the one codec, a folder, a bundle with its adapter), its bad fields are
// refused naming them, and corpus minimize leaves it to the model
// campaign.
func TestModelCaseFile(t *testing.T) {
	f := modelFile()
	roundTrip(t, f)
	src := mustDir(t)
	name, _, err := src.Put(f)
	if err != nil {
		t.Fatal(err)
	}
	entries, errs := Load(src)
	if len(errs) > 0 || len(entries) != 1 {
		t.Fatalf("load: %v %v", entries, errs)
	}
	data, err := bundleBytes(entries)
	if err != nil {
		t.Fatal(err)
	}
	dst := mustDir(t)
	if rep, err := Unbundle(bytes.NewReader(data), dst); err != nil || len(rep.Added) != 1 || len(rep.Bad) != 0 {
		t.Fatalf("unbundle: %+v %v", rep, err)
	}
	got, err := dst.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Adapters) != 1 || got.Adapters[0] != f.Adapters[0] || got.Finding.DriftMap.Rule != f.Finding.DriftMap.Rule {
		t.Fatalf("after the bundle: adapters %+v, drift map %+v", got.Adapters, got.Finding.DriftMap)
	}
	if _, _, err := Minimize(context.Background(), got, shrink.Options{}); !errors.Is(err, ErrModelCase) {
		t.Errorf("minimize: %v, want ErrModelCase", err)
	}

	for _, tc := range []struct {
		name, field string
		edit        func(c map[string]any)
	}{
		{"too many layers", "case.shape.rows", func(c map[string]any) { c["shape"].(map[string]any)["rows"] = spec.MaxModelLayers + 1 }},
		{"huge vocab", "case.shape.vocab", func(c map[string]any) { c["shape"].(map[string]any)["vocab"] = 1 << 40 }},
		{"a model over the budget", "case.shape", func(c map[string]any) {
			c["shape"].(map[string]any)["vocab"] = spec.MaxModelVocab
			c["shape"].(map[string]any)["hidden"] = spec.MaxModelHidden
		}},
		{"kv tile", "case.shape.kv", func(c map[string]any) { c["shape"].(map[string]any)["kv"] = 16 }},
		{"single-op relation", "case.relation", func(c map[string]any) { c["relation"] = spec.RelPadding }},
		{"filler", "case.rel.filler", func(c map[string]any) { c["rel"].(map[string]any)["filler"] = "nan" }},
		{"mask", "case.rel.mask[0]", func(c map[string]any) { c["rel"].(map[string]any)["mask"] = []int{-1} }},
		{"data", "case.data", func(c map[string]any) {
			c["data"] = map[string]any{"tensors": map[string]any{"x": []string{"3f80"}}}
		}},
		{"two targets", "case.targets", func(c map[string]any) { c["targets"] = []string{"exec:a.transformer", "exec:b.transformer"} }},
	} {
		m := encodeRaw(t, NewFile(modelCase(), nil, spec.Env{}, ""))
		tc.edit(m["case"].(map[string]any))
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Decode("dir/m.json", data)
		if err == nil || !strings.HasPrefix(err.Error(), "dir/m.json: "+tc.field+": ") {
			t.Errorf("%s: error %v, want one naming the file and %s", tc.name, err, tc.field)
		}
	}
}
