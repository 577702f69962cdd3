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
	}
	p, _ := Load("llama3-8b")
	qkv := p.Projections()[0]
	if qkv.K != 4096 || qkv.N != 6144 {
		t.Errorf("llama3-8b qkv %d x %d, want 4096 x 6144", qkv.K, qkv.N)
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
	good := `{"name":"x","model":"m","hidden":64,"intermediate":128,"heads":4,"kv_heads":2,"head_dim":16,"vocab":100,"max_tokens":32}`
	if p, err := Load(write("good.json", good)); err != nil || p.Hidden != 64 {
		t.Fatalf("a good file: %v", err)
	}
	tests := []struct{ name, arg, want string }{
		{"unknown name", "gpt-9", "unknown"},
		{"missing file", filepath.Join(dir, "none.json"), "no such file"},
		{"unknown field", write("f.json", strings.Replace(good, `"vocab"`, `"vocabulary":1,"vocab"`, 1)), "unknown field"},
		{"zero dim", write("z.json", strings.Replace(good, `"hidden":64`, `"hidden":0`, 1)), "hidden = 0"},
		{"heads", write("h.json", strings.Replace(good, `"heads":4`, `"heads":5`, 1)), "multiple"},
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
