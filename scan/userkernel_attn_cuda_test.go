//go:build cuda

package scan

import (
	"fmt"
	"testing"
	"time"

	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// attnKernel loads example manifest name on the GPU as kernel:NAME (in
// this process) and returns it with its CPU twin for this device's SMs
// and the SM count.
func attnKernel(t *testing.T, name string) (target.Target, target.Target, int) {
	t.Helper()
	needGPU(t)
	m := exampleAttnManifest(t, name)
	k, err := gpu.NewUserKernel(m)
	if err != nil {
		t.Fatal(err)
	}
	d, err := gpu.Default()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := target.Lookup(k.Info().Name); err != nil {
		target.Register(k.Info().Name, func() (target.Target, error) { return k, nil })
	}
	t.Logf("%s: %s; %d SMs", k.Info().Name, k.Info().Models, d.SMs())
	return k, twinOf(t, m, d.SMs()), d.SMs()
}

// sameAsTwin runs kernel k and its twin on fuzz's batch of case c and
// fails the test (named what) where they differ in a value or an lse tap.
func sameAsTwin(t *testing.T, what string, k, twin target.Target, c spec.Case) {
	t.Helper()
	b := caseBatch(t, c)
	got, want := runAll(t, what, k, b), runAll(t, what, twin, b)
	if i := firstDiff(got.Values, want.Values); i >= 0 {
		t.Errorf("%s: value %d is %v on the GPU, %v in the twin", what, i, got.Values[i], want.Values[i])
	}
	if got.TapCols != 1 {
		t.Errorf("%s: %d tap columns, want 1 (lse)", what, got.TapCols)
	} else if i := firstDiff(got.Taps, want.Taps); i >= 0 {
		t.Errorf("%s: lse %d is %v on the GPU, %v in the twin", what, i, got.Taps[i], want.Taps[i])
	}
}

// TestAttnKernelsTwins: each example decode kernel on the GPU gives its
// CPU twin's bits, outputs and lse taps, on every dtype pair and on both
// sides of its split rule.
func TestAttnKernelsTwins(t *testing.T) {
	kvs := []int{200, 37, 64, 1, 129, 300}
	for _, name := range []string{"attn_decode_fixed", "attn_decode_sm"} {
		k, twin, _ := attnKernel(t, name)
		for _, requests := range []int{1, 5, 16, 17, 24, 40} {
			for _, dt := range dtypePairs {
				what := fmt.Sprintf("%s, %d requests %s->%s", name, requests, dt[0], dt[1])
				sameAsTwin(t, what, k, twin, decodeCase(requests, kvs, dt[0], dt[1], uint64(requests)))
			}
		}
	}
}

// dtypePairs are the input and output dtypes the kernels are held to
// their twins on.
var dtypePairs = [][2]spec.DType{{spec.BF16, spec.BF16}, {spec.FP16, spec.FP16}, {spec.FP32, spec.FP32}, {spec.BF16, spec.FP32}}

// TestAttnPrefillKernelsTwins: each example prefill kernel on the GPU
// gives its CPU twin's bits, outputs and lse taps, on every dtype pair,
// on both sides of the max_seqlen rule and past one 64-token tile.
func TestAttnPrefillKernelsTwins(t *testing.T) {
	for _, name := range []string{"attn_prefill_fixed", "attn_prefill_maxseqlen", "attn_prefill_prefix"} {
		k, twin, _ := attnKernel(t, name)
		for _, sz := range [][2]int{{1, 1}, {3, 9}, {2, 10}, {5, 33}, {2, 130}} {
			for _, dt := range dtypePairs {
				what := fmt.Sprintf("%s, %d x %d tokens %s->%s", name, sz[0], sz[1], dt[0], dt[1])
				sameAsTwin(t, what, k, twin, prefillCase(sz[0], sz[1], dt[0], dt[1], uint64(sz[1])))
			}
		}
	}
}

// TestAttnPrefillKernelScans: the scans of TestAttnPrefillTwinScans on
// the GPU kernels give the twins' results, and so does a neighbour scan
// at llama3-8b's heads (32 heads, 8 KV heads, head dim 128) over a
// neighbour of 1..256 queries beside a watched sequence of 8.
func TestAttnPrefillKernelScans(t *testing.T) {
	for _, tt := range []struct {
		to    int
		shape spec.Shape
	}{
		{20, spec.Shape{SeqLen: 8, Heads: 4, KVHeads: 2, HeadDim: 16}},
		{256, spec.Shape{SeqLen: 8, Heads: 32, KVHeads: 8, HeadDim: 128}},
	} {
		for _, name := range []string{"attn_prefill_fixed", "attn_prefill_maxseqlen"} {
			k, _, _ := attnKernel(t, name)
			s := spec.ScanSpec{Target: k.Info().Name, Op: spec.OpAttnPrefill, Dim: spec.ScanNeighbour, From: 1, To: tt.to,
				Shape: tt.shape, Out: spec.FP32}
			start := time.Now()
			r := run(t, s)
			t.Logf("%s, neighbour 1..%d at %+v: %s, %d batches, %v", name, tt.to, tt.shape, MapWords(r.Map), r.Batches, time.Since(start))
			switch want := "neighbour <= 9 -> A, neighbour >= 10 -> B"; {
			case name == "attn_prefill_fixed" && r.Certificate == nil:
				t.Errorf("%s: not certified: %s", name, MapWords(r.Map))
			case name == "attn_prefill_maxseqlen" && r.Map.Rule != want:
				t.Errorf("%s: map %q, want %q", name, r.Map.Rule, want)
			}
		}
	}
}

// TestAttnKernelScans: the scans of TestAttnTwinScans on the GPU kernels
// give the twins' results (the fixed kernel certified, the SM rule mapped
// at requests x heads against the SMs), and so do scans at llama3-8b's
// heads (32 heads, 8 KV heads, head dim 128) over requests 1..256 at KV
// 300, where 132 SMs split below 5 requests.
func TestAttnKernelScans(t *testing.T) {
	for _, tt := range []struct {
		to    int
		shape spec.Shape
	}{
		{24, spec.Shape{KV: 130, Heads: 8, KVHeads: 2, HeadDim: 8}},
		{256, spec.Shape{KV: 300, Heads: 32, KVHeads: 8, HeadDim: 128}},
	} {
		for _, name := range []string{"attn_decode_fixed", "attn_decode_sm"} {
			k, _, sms := attnKernel(t, name)
			s := spec.ScanSpec{Target: k.Info().Name, Op: spec.OpAttnDecode, From: 1, To: tt.to, Shape: tt.shape,
				Dists: []spec.Dist{spec.DistNormal}}
			start := time.Now()
			r := run(t, s)
			t.Logf("%s over requests 1..%d at %+v: %s, %d batches, %v", name, tt.to, tt.shape, MapWords(r.Map), r.Batches, time.Since(start))
			var want string
			if name == "attn_decode_sm" {
				last := (sms + tt.shape.Heads - 1) / tt.shape.Heads // the most requests with requests*heads < sms
				last--
				want = fmt.Sprintf("batch <= %d -> A, batch >= %d -> B", last, last+1)
			}
			switch {
			case want == "" && r.Certificate == nil:
				t.Errorf("%s: not certified: %s", name, MapWords(r.Map))
			case want != "" && r.Map.Rule != want:
				t.Errorf("%s: map %q, want %q", name, r.Map.Rule, want)
			}
		}
	}
}

// TestAttnKernelsLayouts: the example kernels read the batch's layout as
// their twins do. Each prefill kernel on a chunk past a cached prefix of
// 0..39 tokens (q_start) gives its twin's rows of the chunk, outputs and
// lse; each decode kernel in a paged cache of 1..100-token pages gives its
// twin's rows. Then the scans of TestAttnTwinLayouts on the GPU kernels
// give the twins' results: the fixed prefill kernel certified over chunk
// and prefix, the prefix kernel mapped `prefix % 16 == 0 -> B, otherwise
// -> A`, the fixed decode kernel certified over page sizes.
func TestAttnKernelsLayouts(t *testing.T) {
	for _, name := range []string{"attn_prefill_fixed", "attn_prefill_maxseqlen", "attn_prefill_prefix"} {
		k, twin, _ := attnKernel(t, name)
		for _, dt := range dtypePairs {
			b := caseBatch(t, prefillCase(2, 40, dt[0], dt[1], 40))
			H, D := b.Input.(*oracle.PrefillInput).Heads, b.Input.(*oracle.PrefillInput).HeadDim
			for _, from := range []int{0, 1, 15, 16, 17, 32, 39} {
				what := fmt.Sprintf("%s, chunk from %d, %s->%s", name, from, dt[0], dt[1])
				g := *b
				g.Layout = target.Layout{ChunkFrom: from}
				got, want := runAll(t, what, k, &g), runAll(t, what, twin, &g)
				for s := range 2 {
					lo, hi := (s*40+from)*H, (s+1)*40*H // the chunk's rows
					if i := firstDiff(got.Values[lo*D:hi*D], want.Values[lo*D:hi*D]); i >= 0 {
						t.Errorf("%s: sequence %d value %d is %v on the GPU, %v in the twin", what, s, i, got.Values[lo*D+i], want.Values[lo*D+i])
					}
					if i := firstDiff(got.Taps[lo:hi], want.Taps[lo:hi]); i >= 0 {
						t.Errorf("%s: sequence %d lse %d is %v on the GPU, %v in the twin", what, s, i, got.Taps[lo+i], want.Taps[lo+i])
					}
				}
			}
		}
	}
	for _, name := range []string{"attn_decode_fixed", "attn_decode_sm"} {
		k, twin, _ := attnKernel(t, name)
		b := caseBatch(t, decodeCase(5, []int{200, 37, 64, 1, 129}, spec.BF16, spec.BF16, 5))
		for _, page := range []int{1, 5, 16, 64, 100} {
			what := fmt.Sprintf("%s, pages of %d", name, page)
			g := *b
			g.Layout = target.Layout{PageSize: page}
			got, want := runAll(t, what, k, &g), runAll(t, what, twin, &g)
			if i := firstDiff(got.Values, want.Values); i >= 0 {
				t.Errorf("%s: value %d is %v on the GPU, %v in the twin", what, i, got.Values[i], want.Values[i])
			}
		}
	}
	scan := func(name, dim string, from, to int, sh spec.Shape) *Result {
		k, _, _ := attnKernel(t, name)
		sh.Heads, sh.KVHeads, sh.HeadDim = 4, 2, 16
		start := time.Now()
		r := run(t, spec.ScanSpec{Target: k.Info().Name, Dim: dim, From: from, To: to, Shape: sh, Seed: 1})
		t.Logf("%s, %s %d..%d at %+v: %s, %d batches, %v", name, dim, from, to, sh, MapWords(r.Map), r.Batches, time.Since(start))
		return r
	}
	for _, dim := range []string{spec.ScanChunk, spec.ScanPrefix} {
		if r := scan("attn_prefill_fixed", dim, 1, 39, spec.Shape{SeqLen: 40}); r.Certificate == nil {
			t.Errorf("fixed, %s: not certified: %s", dim, MapWords(r.Map))
		}
	}
	if r, want := scan("attn_prefill_prefix", spec.ScanPrefix, 1, 79, spec.Shape{SeqLen: 80}), "prefix % 16 == 0 -> B, otherwise -> A"; r.Map.Rule != want {
		t.Errorf("prefix kernel: map %q, want %q", r.Map.Rule, want)
	}
	if r := scan("attn_decode_fixed", spec.ScanPage, 1, 80, spec.Shape{Rows: 2, KV: 70}); r.Certificate == nil {
		t.Errorf("fixed decode, page: not certified: %s", MapWords(r.Map))
	}
}
