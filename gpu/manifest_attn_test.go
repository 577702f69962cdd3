package gpu

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

const decodeManifest = `{
  "version": 1,
  "op": "attn_decode",
  "ptx": "k.ptx",
  "entry": "decode",
  "params": ["q", "k_cache", "v_cache", "block_table", "kv_lens", "y", "lse", "heads", "kv_heads", "head_dim", "page_size", "max_pages", "sms", "scale", "in_dtype", "out_dtype"],
  "in": ["bf16", "fp32"],
  "out": ["bf16", "fp32"],
  "grid": ["requests*heads"],
  "block": ["4"],
  "shared": "4*(head_dim+2)*4",
  "schedule": "tile=64 splits=4"
}`

const prefillManifest = `{
  "version": 1,
  "op": "attn_prefill",
  "ptx": "k.ptx",
  "entry": "prefill",
  "params": ["q", "k", "v", "cu_seqlens", "y", "seqs", "max_seqlen", "heads", "kv_heads", "head_dim", "scale", "causal", "in_dtype"],
  "in": ["bf16", "fp16"],
  "out": ["bf16"],
  "grid": ["tokens*heads"],
  "block": ["head_dim"],
  "schedule": "tile=64 splits=1"
}`

// typedPTX is an entry whose parameters have the given PTX types.
func typedPTX(entry string, types []string) string {
	var ps []string
	for i, t := range types {
		ps = append(ps, "\t.param ."+t+" p"+string(rune('a'+i)))
	}
	return ".version 8.0\n.target sm_80\n.visible .entry " + entry + "(\n" + strings.Join(ps, ",\n") + "\n)\n{\n\tret;\n}\n"
}

// ptxTypes gives each manifest parameter the type a C kernel would
// declare: 64-bit pointers, float scale and eps, long long sizes.
func ptxTypes(params []string) []string {
	var ts []string
	for _, p := range params {
		switch p {
		case "scale", "eps":
			ts = append(ts, "f32")
		default:
			ts = append(ts, "u64")
		}
	}
	return ts
}

// TestAttnManifests: attention manifests load with their ABI names, and
// every mistake particular to them is an error naming the field.
func TestAttnManifests(t *testing.T) {
	type tc struct {
		name, js string
		types    func([]string) []string // nil: ptxTypes
		field    string                  // empty: loads
		msg      string
	}
	edit := func(js, old, new string) string {
		if !strings.Contains(js, old) {
			t.Fatalf("test bug: %q not in the manifest", old)
		}
		return strings.Replace(js, old, new, 1)
	}
	retype := func(i int, ty string) func([]string) []string {
		return func(ps []string) []string { ts := ptxTypes(ps); ts[i] = ty; return ts }
	}
	d, p := decodeManifest, prefillManifest
	tests := []tc{
		{name: "decode", js: d},
		{name: "prefill", js: p},
		{name: "decode int sizes", js: d, types: func(ps []string) []string {
			ts := ptxTypes(ps)
			for i := 7; i < 13; i++ {
				ts[i] = "s32"
			}
			return ts
		}},
		{"decode without lse", edit(d, `"y", "lse",`, `"y",`), nil, "", ""},
		{"decode missing block table", edit(d, `"block_table", `, ``), nil, "params", `missing pointer "block_table" (op attn_decode needs q, k_cache, v_cache, block_table, kv_lens and y)`},
		{"decode unknown parameter", edit(d, `"kv_lens"`, `"kv_len"`), nil, "params", `"kv_len" is not a parameter of op attn_decode`},
		{"decode prefill's name", edit(d, `"sms"`, `"cu_seqlens"`), nil, "params", `"cu_seqlens" is not a parameter of op attn_decode`},
		{"prefill missing cu_seqlens", edit(p, `"cu_seqlens", `, ``), nil, "params", `missing pointer "cu_seqlens"`},
		{"pointer in an int", d, retype(3, "u32"), "params", `parameter 3 "block_table" is a pointer, declared .u32`},
		{"lse in an int", d, retype(6, "s32"), "params", `"lse" is a pointer`},
		{"scale as double", d, retype(13, "f64"), "params", `"scale" is fp32 bits, declared .f64 (declare it float)`},
		{"size as float", d, retype(9, "f32"), "params", `"head_dim" is an integer, declared .f32`},
		{"prefill splits", edit(p, `splits=1`, `splits=4`), nil, "schedule", "a prefill row is one split"},
		{"rmsnorm schedule on attention", edit(d, `"tile=64 splits=4"`, `"threads=1 vec=1 warp=butterfly cross=sequential out=(x*rstd)*w"`), nil, "schedule", `want "tile=T splits=S"`},
		{"tile out of range", edit(d, `tile=64`, `tile=0`), nil, "schedule", "tile 0"},
		{"rmsnorm size in attention geometry", edit(d, `"requests*heads"`, `"rows"`), nil, "grid", `unknown name "rows"`},
		{"shared too large at the large sample", edit(d, `"4*(head_dim+2)*4"`, `"max_kv*4"`), nil, "shared", "at the sample shape"},
		{"grid too large", edit(d, `"requests*heads"`, `"pages*256"`), nil, "grid", "want 1..2147483647"},
		{"unknown field", edit(p, `"in": ["bf16", "fp16"]`, `"in": ["bf16", "fp16"], "x": 1`), nil, "", `unknown field "x"`},
		{"in_dtype needed", edit(p, `"causal", "in_dtype"`, `"causal"`), nil, "params", "need the parameter in_dtype"},
		{"prefill reads the layout", edit(edit(p, `"max_seqlen", `, `"max_seqlen", "q_start", `), `"schedule"`, `"layout": true, "schedule"`), nil, "", ""},
		{"prefill layout without q_start", edit(p, `"schedule"`, `"layout": true, "schedule"`), nil, "params", `missing "q_start": a kernel that reads the layout ("layout": true) takes it`},
		{"decode reads the layout", edit(d, `"schedule"`, `"layout": true, "schedule"`), nil, "", ""},
		{"decode layout without page_size", edit(edit(d, `"page_size", `, ``), `"schedule"`, `"layout": true, "schedule"`), nil, "params", `missing "page_size"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f struct {
				Entry  string
				Params []string
			}
			// the PTX matches the manifest's parameter list, so the error
			// is the one the case is about
			for _, line := range strings.Split(tt.js, "\n") {
				if strings.Contains(line, `"params"`) {
					for _, q := range strings.Split(line[strings.Index(line, "[")+1:strings.Index(line, "]")], ",") {
						f.Params = append(f.Params, strings.Trim(strings.TrimSpace(q), `"`))
					}
				}
			}
			f.Entry = "decode"
			if strings.Contains(tt.js, `"attn_prefill"`) {
				f.Entry = "prefill"
			}
			types := ptxTypes(f.Params)
			if tt.types != nil {
				types = tt.types(f.Params)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "m.json")
			if err := errors.Join(os.WriteFile(filepath.Join(dir, "k.ptx"), []byte(typedPTX(f.Entry, types)), 0o644),
				os.WriteFile(path, []byte(tt.js), 0o644)); err != nil {
				t.Fatal(err)
			}
			m, err := LoadManifest(path, ManifestOptions{})
			if tt.field == "" && tt.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(m.Params, f.Params) || m.Info("cpu").Schedule == "" {
					t.Fatalf("manifest %+v", m)
				}
				if layout := strings.Contains(tt.js, `"layout": true`); m.Info("cpu").Layouts != layout {
					t.Errorf("Info.Layouts %v, want %v (the manifest's layout)", m.Info("cpu").Layouts, layout)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			var me *ManifestError
			if !errors.As(err, &me) || me.Field != tt.field {
				t.Errorf("error %v: field %q, want %q", err, me.Field, tt.field)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
		})
	}
}

// kernelInputsOf is case c's batch and its ABI inputs for a device of
// 132 multiprocessors (an H200's), failing the test on an error.
func kernelInputsOf(t *testing.T, c spec.Case) (*target.Batch, KernelArgs) {
	t.Helper()
	b, err := inputs.Of(c)
	if err != nil {
		t.Fatal(err)
	}
	a, err := KernelInputs(b, 132)
	if err != nil {
		t.Fatal(err)
	}
	return b, a
}

// sameSizes fails unless sizes are exactly want.
func sameSizes(t *testing.T, sizes, want map[string]int64) {
	t.Helper()
	for k, v := range want {
		if sizes[k] != v {
			t.Errorf("size %s = %d, want %d", k, sizes[k], v)
		}
	}
	if len(sizes) != len(want) {
		t.Errorf("sizes %v, want %v", sizes, want)
	}
}

// TestKernelInputsDecode: attn_decode's ABI inputs hold each request's
// tokens where its block table says, pages handed out from the end of the
// cache, NaN in the slots past kv_len, -1 past a request's pages.
func TestKernelInputsDecode(t *testing.T) {
	lens := []int{40, 1, 16, 17}
	c := spec.Case{Version: spec.CaseVersion, Op: spec.OpAttnDecode, Relation: spec.RelOracleParity,
		Shape: spec.Shape{Rows: len(lens), KV: lens[0], KVLens: lens, Heads: 4, KVHeads: 2, HeadDim: 3},
		In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 7, GenVersion: spec.GeneratorVersion}
	b, a := kernelInputsOf(t, c)
	// pages: 3 + 1 + 1 + 2 = 7; the widest request has 3
	want := map[string]int64{"requests": 4, "heads": 4, "kv_heads": 2, "head_dim": 3, "page_size": DecodePageSize,
		"max_pages": 3, "pages": 7, "max_kv": 40, "sms": 132}
	sameSizes(t, a.Sizes, want)
	table := a.Tensors["block_table"].Ints
	if wantTable := []int{6, 5, 4, 3, -1, -1, 2, -1, -1, 1, 0, -1}; !slices.Equal(table, wantTable) {
		t.Errorf("block table %v, want %v", table, wantTable)
	}
	if !slices.Equal(a.Tensors["kv_lens"].Ints, lens) {
		t.Errorf("kv_lens %v, want %v", a.Tensors["kv_lens"].Ints, lens)
	}
	if a.Scale != oracle.Scale(3) {
		t.Errorf("scale %v, want %v", a.Scale, oracle.Scale(3))
	}
	kc, vc, width := a.Tensors["k_cache"].Vals, a.Tensors["v_cache"].Vals, 2*3
	used := map[int]bool{}
	for r, L := range lens {
		for tok := 0; tok < L; tok++ {
			off := (table[r*3+tok/DecodePageSize]*DecodePageSize + tok%DecodePageSize) * width
			used[off/width] = true
			for i := 0; i < width; i++ {
				if kc[off+i] != b.Input.(*oracle.DecodeInput).K[r][tok*width+i] || vc[off+i] != b.Input.(*oracle.DecodeInput).V[r][tok*width+i] {
					t.Fatalf("request %d token %d value %d: cache k %v v %v, batch k %v v %v", r, tok, i,
						kc[off+i], vc[off+i], b.Input.(*oracle.DecodeInput).K[r][tok*width+i], b.Input.(*oracle.DecodeInput).V[r][tok*width+i])
				}
			}
		}
	}
	for slot := 0; slot < 7*DecodePageSize; slot++ {
		if !used[slot] && !math.IsNaN(float64(kc[slot*width])) {
			t.Fatalf("unused slot %d holds %v, want NaN", slot, kc[slot*width])
		}
	}
	if _, err := KernelInputs(&target.Batch{Op: spec.OpModel}, 132); err == nil {
		t.Error("a model batch: no error")
	}
}

// TestKernelInputsPrefill: attn_prefill's ABI inputs are the packed
// batch with cu_seqlens at every sequence's first token.
func TestKernelInputsPrefill(t *testing.T) {
	c := spec.Case{Version: spec.CaseVersion, Op: spec.OpAttnPrefill, Relation: spec.RelOracleParity,
		Shape: spec.Shape{Seqs: 3, SeqLen: 5, Heads: 4, KVHeads: 1, HeadDim: 8},
		In:    spec.FP16, Out: spec.FP16, Dist: spec.DistNormal, Seed: 3, GenVersion: spec.GeneratorVersion}
	_, a := kernelInputsOf(t, c)
	want := map[string]int64{"seqs": 3, "tokens": 15, "max_seqlen": 5, "q_start": 0, "heads": 4, "kv_heads": 1, "head_dim": 8, "sms": 132}
	sameSizes(t, a.Sizes, want)
	if cu := a.Tensors["cu_seqlens"].Ints; !slices.Equal(cu, []int{0, 5, 10, 15}) {
		t.Errorf("cu_seqlens %v, want [0 5 10 15]", cu)
	}
	if len(a.Tensors["q"].Vals) != 15*4*8 || len(a.Tensors["k"].Vals) != 15*8 || len(a.Tensors["v"].Vals) != 15*8 {
		t.Errorf("q %d k %d v %d values", len(a.Tensors["q"].Vals), len(a.Tensors["k"].Vals), len(a.Tensors["v"].Vals))
	}
	if a.Causal != 1 || a.Scale != oracle.Scale(8) {
		t.Errorf("causal %d scale %v", a.Causal, a.Scale)
	}
}

// TestKernelInputsLayout: a chunk's q_start is the batch's
// Layout.ChunkFrom, the queries below it NaN (not this chunk's) and the
// rest the batch's; the decode cache's pages are Layout.PageSize tokens
// (DecodePageSize at 0). A chunk past the prompt, or a negative page
// size, is an error naming it.
func TestKernelInputsLayout(t *testing.T) {
	c := spec.Case{Version: spec.CaseVersion, Op: spec.OpAttnPrefill, Relation: spec.RelOracleParity,
		Shape: spec.Shape{Seqs: 2, SeqLen: 5, Heads: 2, KVHeads: 1, HeadDim: 4},
		In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 3, GenVersion: spec.GeneratorVersion}
	b, err := inputs.Of(c)
	if err != nil {
		t.Fatal(err)
	}
	b.Layout.ChunkFrom = 3
	a, err := KernelInputs(b, 132)
	if err != nil {
		t.Fatal(err)
	}
	if a.Sizes["q_start"] != 3 {
		t.Errorf("q_start %d, want 3", a.Sizes["q_start"])
	}
	q, width := a.Tensors["q"].Vals, 2*4
	for i, v := range q {
		if pos := i / width % 5; (pos < 3) != math.IsNaN(float64(v)) || (pos >= 3 && v != b.Input.(*oracle.PrefillInput).Q[i]) {
			t.Fatalf("q value %d (position %d) is %v, the batch's %v", i, pos, v, b.Input.(*oracle.PrefillInput).Q[i])
		}
	}
	if math.IsNaN(float64(b.Input.(*oracle.PrefillInput).Q[0])) {
		t.Error("the batch's own q was changed")
	}
	b.Layout.ChunkFrom = 5
	if _, err := KernelInputs(b, 132); err == nil || !strings.Contains(err.Error(), "chunk_from < seq_len") {
		t.Errorf("a chunk from position 5 of 5: error %v", err)
	}

	lens := []int{11, 1}
	d := spec.Case{Version: spec.CaseVersion, Op: spec.OpAttnDecode, Relation: spec.RelOracleParity,
		Shape: spec.Shape{Rows: 2, KV: lens[0], KVLens: lens, Heads: 2, KVHeads: 1, HeadDim: 2},
		In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 5, GenVersion: spec.GeneratorVersion}
	if b, err = inputs.Of(d); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ page, size, pages int }{{0, DecodePageSize, 2}, {5, 5, 4}, {1, 1, 12}, {11, 11, 2}} {
		b.Layout.PageSize = tt.page
		a, err := KernelInputs(b, 132)
		if err != nil {
			t.Fatal(err)
		}
		if a.Sizes["page_size"] != int64(tt.size) || a.Sizes["pages"] != int64(tt.pages) {
			t.Errorf("layout page size %d: page_size %d pages %d, want %d and %d", tt.page, a.Sizes["page_size"], a.Sizes["pages"], tt.size, tt.pages)
		}
		table, kc, mp := a.Tensors["block_table"].Ints, a.Tensors["k_cache"].Vals, int(a.Sizes["max_pages"])
		for r, L := range lens {
			for tok := range L {
				off := (table[r*mp+tok/tt.size]*tt.size + tok%tt.size) * 2
				if kc[off] != b.Input.(*oracle.DecodeInput).K[r][tok*2] {
					t.Fatalf("page size %d: request %d token %d: cache %v, batch %v", tt.size, r, tok, kc[off], b.Input.(*oracle.DecodeInput).K[r][tok*2])
				}
			}
		}
	}
	b.Layout.PageSize = -1
	if _, err := KernelInputs(b, 132); err == nil || !strings.Contains(err.Error(), "page size -1") {
		t.Errorf("page size -1: error %v", err)
	}
}
