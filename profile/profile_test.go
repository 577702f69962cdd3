package profile

import (
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

func TestEmbedded(t *testing.T) {
	names := Names()
	for _, want := range []string{"llama3-8b", "mistral-7b", "qwen2.5-7b", "qwen3-8b"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("embedded profiles %v lack %s", names, want)
		}
	}
	for _, n := range names {
		p, err := Load(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if p.Name != n || p.Model == "" || p.Source == "" {
			t.Errorf("%s: name %q model %q source %q", n, p.Name, p.Model, p.Source)
		}
		if p.DType != spec.BF16 || (p.Eps != 1e-5 && p.Eps != 1e-6) {
			t.Errorf("%s: dtype %s eps %g, want the config's bfloat16 and rms_norm_eps", n, p.DType, p.Eps)
		}
	}
	p, _ := Load("llama3-8b")
	qkv := p.Projections()[0]
	if qkv.K != 4096 || qkv.N != 6144 {
		t.Errorf("llama3-8b qkv %d x %d, want 4096 x 6144", qkv.K, qkv.N)
	}
}

// TestMoE: the MoE profiles carry their config.json's routed experts and
// experts per token, and DeepSeek-V3 says its router is not moe_route's.
func TestMoE(t *testing.T) {
	for _, tt := range []struct {
		name          string
		experts, topK int
	}{{"qwen3-30b-a3b", 128, 8}, {"mixtral-8x7b", 8, 2}, {"deepseek-v3", 256, 8}, {"llama3-8b", 0, 0}} {
		p, err := Load(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		e, eok := p.Dim("experts")
		k, kok := p.Dim("top_k")
		if e != tt.experts || k != tt.topK || eok != (tt.experts > 0) || kok != (tt.topK > 0) {
			t.Errorf("%s: experts %d (%v), top_k %d (%v), want %d, %d", tt.name, e, eok, k, kok, tt.experts, tt.topK)
		}
	}
	p, _ := Load("deepseek-v3")
	if !strings.Contains(p.Routing, "sigmoid") {
		t.Errorf("deepseek-v3 routing %q does not say its router is sigmoid-scored", p.Routing)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `{"name":"x","model":"m","hidden":64,"intermediate":128,"heads":4,"kv_heads":2,"head_dim":16,"vocab":100,"dtype":"bf16","eps":1e-5,"max_tokens":32}`
	if p, err := Load(write("good.json", good)); err != nil || p.Hidden != 64 {
		t.Fatalf("a good file: %v", err)
	}
	tests := []struct{ name, arg, want string }{
		{"unknown name", "gpt-9", "unknown"},
		{"missing file", filepath.Join(dir, "none.json"), "no such file"},
		{"unknown field", write("f.json", strings.Replace(good, `"vocab"`, `"vocabulary":1,"vocab"`, 1)), "unknown field"},
		{"zero dim", write("z.json", strings.Replace(good, `"hidden":64`, `"hidden":0`, 1)), "hidden = 0"},
		{"heads", write("h.json", strings.Replace(good, `"heads":4`, `"heads":5`, 1)), "multiple"},
		{"no dtype", write("d.json", strings.Replace(good, `"dtype":"bf16",`, "", 1)), "dtype is missing"},
		{"bad dtype", write("b.json", strings.Replace(good, `"bf16"`, `"fp8"`, 1)), `dtype "fp8"`},
		{"no eps", write("e.json", strings.Replace(good, `"eps":1e-5,`, "", 1)), "eps = 0"},
		{"experts without top_k", write("x.json", strings.Replace(good, `"eps":1e-5`, `"eps":1e-5,"experts":8`, 1)), "top_k = 0"},
		{"top_k above experts", write("k.json", strings.Replace(good, `"eps":1e-5`, `"eps":1e-5,"experts":8,"top_k":9`, 1)), "top_k = 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Load(tt.arg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestApplyKeepsBatchDims(t *testing.T) {
	p, _ := Load("qwen2.5-7b")
	r := rand.New(rand.NewSource(1))
	c := spec.Case{Op: spec.OpAttnDecode, Shape: spec.Shape{Rows: 33, KV: 49, Heads: 2, KVHeads: 1, HeadDim: 64},
		Rel: spec.RelParams{Batch: 40}}
	p.Apply(r, &c)
	if !reflect.DeepEqual(c.Shape, spec.Shape{Rows: 33, KV: 49, Heads: 28, KVHeads: 4, HeadDim: 128}) || c.Rel.Batch != 40 {
		t.Errorf("applied: %+v %+v", c.Shape, c.Rel)
	}
	if c.In != spec.BF16 || c.Out != spec.BF16 {
		t.Errorf("applied dtypes %s -> %s, want the profile's bf16", c.In, c.Out)
	}
	seen := map[[2]int]bool{}
	for range 200 {
		g := spec.Case{Op: spec.OpGEMM, Shape: spec.Shape{Rows: 5, Hidden: 8, N: 8}}
		p.Apply(r, &g)
		seen[[2]int{g.Shape.Hidden, g.Shape.N}] = true
		if g.Shape.Rows != 5 {
			t.Fatal("rows changed")
		}
	}
	if len(seen) != len(p.Projections()) {
		t.Errorf("gemm drew %d of %d projections", len(seen), len(p.Projections()))
	}
}

func TestApplyDTypes(t *testing.T) {
	p, err := Load("testdata/small.json")
	if err != nil {
		t.Fatal(err)
	}
	p.DType = spec.FP16
	r := rand.New(rand.NewSource(1))
	tests := []struct {
		name string
		c    spec.Case
		want spec.Case
	}{
		{"rmsnorm", spec.Case{Op: spec.OpRMSNorm, In: spec.FP32, Out: spec.BF16, Eps: 1e-12, Shape: spec.Shape{Rows: 3, Hidden: 64}},
			spec.Case{Op: spec.OpRMSNorm, In: spec.FP16, Out: spec.FP16, Eps: 1e-5, Shape: spec.Shape{Rows: 3, Hidden: 768}}},
		{"logprob parity", spec.Case{Op: spec.OpLogProb, In: spec.BF16, Out: spec.FP32, Compare: spec.FP32, Shape: spec.Shape{Rows: 2, Vocab: 7}},
			spec.Case{Op: spec.OpLogProb, In: spec.FP16, Out: spec.FP32, Compare: spec.FP16, Shape: spec.Shape{Rows: 2, Vocab: 2000}}},
		{"logprob", spec.Case{Op: spec.OpLogProb, In: spec.FP32, Out: spec.FP32, Shape: spec.Shape{Rows: 2, Vocab: 7}},
			spec.Case{Op: spec.OpLogProb, In: spec.FP16, Out: spec.FP32, Shape: spec.Shape{Rows: 2, Vocab: 2000}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			p.Apply(r, &c)
			if !reflect.DeepEqual(c, tt.want) {
				t.Errorf("applied %+v, want %+v", c, tt.want)
			}
			if err := p.Holds(c); err != nil {
				t.Errorf("Holds after Apply: %v", err)
			}
			if err := p.Holds(tt.c); err == nil {
				t.Errorf("Holds of the case before Apply: nil, want an error")
			}
		})
	}
}

func TestHolds(t *testing.T) {
	p, err := Load("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	at := spec.Case{Op: spec.OpAttnDecode, In: spec.BF16, Out: spec.BF16, Shape: spec.Shape{Rows: 900, KV: 300, Heads: 32, KVHeads: 8, HeadDim: 128}}
	if err := p.Holds(at); err != nil {
		t.Fatalf("a decode at the model's shape: %v", err)
	}
	tests := []struct {
		name string
		edit func(*spec.Case)
		want string
	}{
		{"heads", func(c *spec.Case) { c.Shape.Heads = 2 }, "not the profile's"},
		{"head dim", func(c *spec.Case) { c.Shape.HeadDim = 64 }, "not the profile's"},
		{"dtype", func(c *spec.Case) { c.In, c.Out = spec.FP32, spec.FP32 }, "dtypes in fp32"},
	}
	for _, tt := range tests {
		c := at
		tt.edit(&c)
		if err := p.Holds(c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	g := spec.Case{Op: spec.OpGEMM, In: spec.BF16, Out: spec.BF16, Shape: spec.Shape{Rows: 5, Hidden: 14336, N: 4096}}
	if err := p.Holds(g); err != nil {
		t.Errorf("the down projection: %v", err)
	}
	g.Shape.N = 159
	if err := p.Holds(g); err == nil {
		t.Error("a gemm of N 159: nil, want an error")
	}
	r := spec.Case{Op: spec.OpRMSNorm, In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Shape: spec.Shape{Rows: 5, Hidden: 4096}}
	if err := p.Holds(r); err == nil || !strings.Contains(err.Error(), "eps") {
		t.Errorf("an rmsnorm at eps 1e-6: %v, want the eps named", err)
	}
}
