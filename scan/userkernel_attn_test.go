package scan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The example attention kernels of gpu/testdata/userkernels have CPU twins
// here: their step-by-step loop (attn_decode.cuh's decode_row) in Go, on
// the very inputs the worker uploads (gpu.KernelInputs: the paged K/V
// cache, the block table, kv_lens), with the split count of the kernel's
// rule. The twins say what the GPU kernels must give (the cuda test
// TestAttnKernelsTwins holds the kernels to them bit for bit): the fixed
// one certifies, the SM-rule one maps at requests x heads = 132 (an
// H200's SMs).

// decodeSplits is each example decode kernel's split rule, by entry.
var decodeSplits = map[string]func(requests, heads, sms int64) int64{
	"attn_decode_fixed": func(int64, int64, int64) int64 { return 4 },
	"attn_decode_sm": func(requests, heads, sms int64) int64 {
		if requests*heads < sms {
			return 4
		}
		return 1
	},
}

// exampleAttnManifest loads an example manifest; where build.sh has not
// made its PTX yet, beside a stand-in PTX entry with the manifest's
// parameter count.
func exampleAttnManifest(t *testing.T, name string) *gpu.Manifest {
	t.Helper()
	dir := filepath.Join("..", "gpu", "testdata", "userkernels")
	path := filepath.Join(dir, name+".json")
	if _, err := os.Stat(filepath.Join(dir, name+".ptx")); err != nil {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Entry  string
			Params []string
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var ps []string
		for i := range f.Params {
			ps = append(ps, fmt.Sprintf("\t.param .u64 p%d", i))
		}
		ptx := ".version 8.0\n.target sm_80\n.visible .entry " + f.Entry + "(\n" + strings.Join(ps, ",\n") + "\n)\n{\n\tret;\n}\n"
		tmp := t.TempDir()
		path = filepath.Join(tmp, name+".json")
		if err := errors.Join(os.WriteFile(path, raw, 0o644), os.WriteFile(filepath.Join(tmp, name+".ptx"), []byte(ptx), 0o644)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := gpu.LoadManifest(path, gpu.ManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// kernelTwin is the CPU twin of an example attention kernel: target
// "twin:NAME", claiming what the manifest claims, whose rows are rows(a)
// on the ABI's inputs a of a batch of op (gpu.KernelInputs for a device of
// sms multiprocessors), y rounded to out and the lse taps.
type kernelTwin struct {
	m    *gpu.Manifest
	op   spec.Op
	sms  int
	rows func(a gpu.KernelArgs, out oracle.DType) (y, lse []float32)
}

func (k kernelTwin) Info() target.Info {
	i := k.m.Info("cpu")
	i.Name = "twin:" + k.m.Name
	return i
}

func (k kernelTwin) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if b.Op != k.op {
		return nil, fmt.Errorf("twin: %s", b.Op)
	}
	a, err := gpu.KernelInputs(b, k.sms)
	if err != nil {
		return nil, err
	}
	y, lse := k.rows(a, b.Out)
	return twinOutput(b, rows, y, lse)
}

// twinDecode is attn_decode.cuh's decode_row for every row r (request
// r / heads, head r % heads) on the ABI's inputs: y rounded to out, and
// lse.
func twinDecode(a gpu.KernelArgs, splitsOf func(requests, heads, sms int64) int64, out oracle.DType) (y, lse []float32) {
	const tile = 64
	z := a.Sizes
	B, H, KH, D := int(z["requests"]), int(z["heads"]), int(z["kv_heads"]), int(z["head_dim"])
	ps, maxPages := int(z["page_size"]), int(z["max_pages"])
	q, kc, vc := a.Tensors["q"].Vals, a.Tensors["k_cache"].Vals, a.Tensors["v_cache"].Vals
	table, lens := a.Tensors["block_table"].Ints, a.Tensors["kv_lens"].Ints
	splits := int(splitsOf(z["requests"], z["heads"], z["sms"]))
	y, lse = make([]float32, B*H*D), make([]float32, B*H)
	negInf, negZero := float32(math.Inf(-1)), float32(math.Copysign(0, -1))
	for r := 0; r < B*H; r++ {
		b, h := r/H, r%H
		kvh := h / (H / KH)
		L := lens[b]
		at := func(t int) int { return ((table[b*maxPages+t/ps]*ps+t%ps)*KH + kvh) * D }
		score := func(t int) float32 {
			dot := float32(0)
			for d := 0; d < D; d++ {
				dot = oracle.FMA32(q[r*D+d], kc[at(t)+d], dot)
			}
			return oracle.Mul32(dot, a.Scale)
		}
		bounds := oracle.SplitBounds(L, tile, splits)
		ms, ls, accs := make([]float32, len(bounds)), make([]float32, len(bounds)), make([][]float32, len(bounds))
		for c, bd := range bounds {
			m, l, acc := negInf, float32(0), make([]float32, D)
			for t0 := bd[0]; t0 < bd[1]; t0 += tile {
				m, l = twinTile(m, l, acc, t0, min(t0+tile, bd[1]), score, vc, at)
			}
			ms[c], ls[c], accs[c] = m, l, acc
		}
		M := negInf
		for _, m := range ms {
			M = oracle.Max32(M, m)
		}
		den := negZero
		for c := range ms {
			den = oracle.FMA32(oracle.Exp32(oracle.Sub32(ms[c], M)), ls[c], den)
		}
		for d := 0; d < D; d++ {
			num := negZero
			for c := range ms {
				num = oracle.FMA32(oracle.Exp32(oracle.Sub32(ms[c], M)), accs[c][d], num)
			}
			y[r*D+d] = oracle.Div32(num, den)
		}
		lse[r] = oracle.Add32(M, oracle.Log32(den))
	}
	oracle.RoundSlice(out, y)
	return y, lse
}

// twinTile is the kernels' online-softmax step over the KV tile of
// tokens t0..t1-1: mt = max(m, score(j) for j in the tile); l and acc
// scaled by alpha = exp32(m - mt); then for each j in order p =
// exp32(score(j) - mt), l += p, acc[d] = fma(p, v[at(j)+d], acc[d]). It
// returns the new m (mt) and l.
func twinTile(m, l float32, acc []float32, t0, t1 int, score func(int) float32, v []float32, at func(int) int) (float32, float32) {
	mt := m
	for j := t0; j < t1; j++ {
		mt = oracle.Max32(mt, score(j))
	}
	alpha := oracle.Exp32(oracle.Sub32(m, mt))
	l = oracle.Mul32(l, alpha)
	for d := range acc {
		acc[d] = oracle.Mul32(acc[d], alpha)
	}
	for j := t0; j < t1; j++ {
		p := oracle.Exp32(oracle.Sub32(score(j), mt))
		l = oracle.Add32(l, p)
		for d := range acc {
			acc[d] = oracle.FMA32(p, v[at(j)+d], acc[d])
		}
	}
	return mt, l
}

// prefillTiles is each example prefill kernel's KV tile rule, by entry,
// of its sizes (max_seqlen, q_start).
var prefillTiles = map[string]func(sizes map[string]int64) int{
	"attn_prefill_fixed": func(map[string]int64) int { return 64 },
	"attn_prefill_maxseqlen": func(z map[string]int64) int {
		if z["max_seqlen"]-z["q_start"] >= 10 {
			return 4
		}
		return 64
	},
	"attn_prefill_prefix": func(z map[string]int64) int {
		if q := z["q_start"]; q > 0 && q%16 == 0 {
			return 16
		}
		return 64
	},
}

// twinOutput is the selected rows of y (head_dim wide) and their lse taps.
func twinOutput(b *target.Batch, rows []int, y, lse []float32) (*target.Output, error) {
	sel, err := oracle.SelectRows(rows, b.Rows())
	if err != nil {
		return nil, err
	}
	D := b.Cols()
	o := &target.Output{Rows: sel, Cols: D, DType: b.Out, TapCols: 1}
	for _, r := range sel {
		o.Values = append(o.Values, y[r*D:(r+1)*D]...)
		o.Taps = append(o.Taps, lse[r])
	}
	return o, nil
}

// twinPrefill is attn_prefill.cuh's prefill_row for every row r (token
// r / heads of the packed batch, head r % heads) at a position from
// q_start on, on the ABI's inputs, in KV tiles of tile tokens from the
// sequence's start: y rounded to out, and lse; the rows below q_start are
// NaN (the kernel does not write them).
func twinPrefill(a gpu.KernelArgs, tile int, out oracle.DType) (y, lse []float32) {
	z := a.Sizes
	T, H, KH, D := int(z["tokens"]), int(z["heads"]), int(z["kv_heads"]), int(z["head_dim"])
	q, kk, vv, cu := a.Tensors["q"].Vals, a.Tensors["k"].Vals, a.Tensors["v"].Vals, a.Tensors["cu_seqlens"].Ints
	y, lse = make([]float32, T*H*D), make([]float32, T*H)
	for r := 0; r < T*H; r++ {
		t, h := r/H, r%H
		kvh := h / (H / KH)
		s := 0
		for s+1 < len(cu)-1 && cu[s+1] <= t {
			s++
		}
		if int64(t-cu[s]) < z["q_start"] {
			nan := float32(math.NaN())
			for d := 0; d < D; d++ {
				y[r*D+d] = nan
			}
			lse[r] = nan
			continue
		}
		score := func(j int) float32 {
			dot := float32(0)
			for d := 0; d < D; d++ {
				dot = oracle.FMA32(q[r*D+d], kk[(j*KH+kvh)*D+d], dot)
			}
			return oracle.Mul32(dot, a.Scale)
		}
		m, l, acc := float32(math.Inf(-1)), float32(0), make([]float32, D)
		at := func(j int) int { return (j*KH + kvh) * D }
		for t0 := cu[s]; t0 <= t; t0 += tile {
			m, l = twinTile(m, l, acc, t0, min(t0+tile, t+1), score, vv, at)
		}
		for d := range acc {
			y[r*D+d] = oracle.Div32(acc[d], l)
		}
		lse[r] = oracle.Add32(m, oracle.Log32(l))
	}
	oracle.RoundSlice(out, y)
	return y, lse
}

// twinOf is the CPU twin of example manifest m for a device of sms
// multiprocessors.
func twinOf(t *testing.T, m *gpu.Manifest, sms int) target.Target {
	t.Helper()
	if f := decodeSplits[m.Entry]; f != nil {
		return kernelTwin{m: m, op: spec.OpAttnDecode, sms: sms, rows: func(a gpu.KernelArgs, out oracle.DType) (y, lse []float32) {
			return twinDecode(a, f, out)
		}}
	}
	if f := prefillTiles[m.Entry]; f != nil {
		return kernelTwin{m: m, op: spec.OpAttnPrefill, sms: target.SMs, rows: func(a gpu.KernelArgs, out oracle.DType) (y, lse []float32) {
			return twinPrefill(a, f(a.Sizes), out)
		}}
	}
	t.Fatalf("no twin of entry %s", m.Entry)
	return nil
}

// attnTwin registers the twin of example manifest name and returns its
// target name.
func attnTwin(t *testing.T, name string) string {
	t.Helper()
	tw := twinOf(t, exampleAttnManifest(t, name), target.SMs)
	n := tw.Info().Name
	if _, err := target.Lookup(n); err != nil {
		target.Register(n, func() (target.Target, error) { return tw, nil })
	}
	return n
}

// decodeCase is an attn_decode case of requests requests whose KV lengths
// cycle through kvs.
func decodeCase(requests int, kvs []int, in, out spec.DType, seed uint64) spec.Case {
	return spec.Case{Version: spec.CaseVersion, Op: spec.OpAttnDecode, Relation: spec.RelOracleParity,
		Shape: spec.Shape{Rows: requests, KV: kvs[0], KVLens: kvs, Heads: 8, KVHeads: 2, HeadDim: 16},
		In:    in, Out: out, Dist: spec.DistNormal, Seed: seed, GenVersion: spec.GeneratorVersion}
}

// TestAttnTwins: through the manifest's ABI inputs (paged cache, block
// table), the fixed example kernel's twin is bitwise oracle.Decode with
// its declared schedule tile=64 splits=4 on every batch, and the SM-rule
// twin is bitwise the drift model drift-decode-splits-by-batch (4 splits
// below 132 request-heads, the declared tile=64 splits=1 from 132 on),
// outputs and their fp32 log-sum-exp taps: the fixed twin's lse is the
// SM twin's wherever both run 4 splits.
func TestAttnTwins(t *testing.T) {
	tw := newAttnTwins(t, "attn_decode_fixed", "tile=64 splits=4", "attn_decode_sm", "tile=64 splits=1", "drift-decode-splits-by-batch")
	kvs := []int{200, 37, 64, 1, 129, 300}
	for _, tt := range []struct {
		requests int
		in, out  spec.DType
	}{{1, spec.BF16, spec.BF16}, {5, spec.FP32, spec.FP32}, {16, spec.BF16, spec.BF16}, {17, spec.BF16, spec.FP32}, {24, spec.FP16, spec.FP16}} {
		b := caseBatch(t, decodeCase(tt.requests, kvs, tt.in, tt.out, uint64(tt.requests)))
		name := fmt.Sprintf("%d requests %s->%s", tt.requests, tt.in, tt.out)
		want, err := oracle.Decode(*b.Input.(*oracle.DecodeInput), oracle.AttentionSchedule{Tile: 64, Splits: 4}, nil)
		if err != nil {
			t.Fatal(err)
		}
		gf, gs := tw.run(t, name, b, want)
		lseSame := firstDiff(gf.Taps, gs.Taps) < 0
		if split := tt.requests*8 < target.SMs; lseSame != split {
			t.Errorf("%s: the twins' lse equal: %v, want %v (4 splits each: %v)", name, lseSame, split, split)
		}
	}
}

// attnTwins are the twins (for target.SMs) of a fixed example kernel and
// of a drifting one, and the drift model the drifting twin equals.
type attnTwins struct{ fixed, drift, model target.Target }

// newAttnTwins is the attnTwins of example manifests fixed and drift,
// which must declare schedules fixedSched and driftSched, and of drift
// model model.
func newAttnTwins(t *testing.T, fixed, fixedSched, drift, driftSched, model string) attnTwins {
	t.Helper()
	mf, md := exampleAttnManifest(t, fixed), exampleAttnManifest(t, drift)
	if mf.Schedule != fixedSched || md.Schedule != driftSched {
		t.Fatalf("declared schedules %q and %q, want %q and %q", mf.Schedule, md.Schedule, fixedSched, driftSched)
	}
	m, err := target.Lookup(model)
	if err != nil {
		t.Fatal(err)
	}
	return attnTwins{twinOf(t, mf, target.SMs), twinOf(t, md, target.SMs), m}
}

// run runs both twins on b, checks that the fixed twin gives want (the
// oracle at its declared schedule) and the drifting twin the model's
// values, and returns the twins' outputs.
func (tw attnTwins) run(t *testing.T, name string, b *target.Batch, want []float32) (fixed, drift *target.Output) {
	t.Helper()
	fixed = runAll(t, name, tw.fixed, b)
	if i := firstDiff(fixed.Values, want); i >= 0 {
		t.Errorf("%s: fixed twin value %d is %v, the oracle at its schedule %v", name, i, fixed.Values[i], want[i])
	}
	drift, wm := runAll(t, name, tw.drift, b), runAll(t, name, tw.model, b)
	if i := firstDiff(drift.Values, wm.Values); i >= 0 {
		t.Errorf("%s: %s value %d is %v, %s %v", name, tw.drift.Info().Name, i, drift.Values[i], tw.model.Info().Name, wm.Values[i])
	}
	return fixed, drift
}

// caseBatch is the batch of case c (inputs.Of), failing the test on an error.
func caseBatch(t *testing.T, c spec.Case) *target.Batch {
	t.Helper()
	b, err := inputs.Of(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runAll runs tg on every row of b, failing the test (named what) on an
// error.
func runAll(t *testing.T, what string, tg target.Target, b *target.Batch) *target.Output {
	t.Helper()
	out, err := tg.Run(context.Background(), b, nil)
	if err != nil {
		t.Fatalf("%s: %s: %v", what, tg.Info().Name, err)
	}
	return out
}

// firstDiff is the first index where a and b differ in bits, or -1.
func firstDiff(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestAttnTwinScans: a scan of requests decoded together 1..24 (8 heads,
// KV 130: three tiles) certifies the fixed kernel's twin and maps the SM
// twin exactly at its rule, requests x heads against 132: requests <= 16
// run 4 splits, 17 on run 1.
func TestAttnTwinScans(t *testing.T) {
	scanOf := func(name string) *Result {
		s := spec.ScanSpec{Target: attnTwin(t, name), Op: spec.OpAttnDecode, From: 1, To: 24,
			Shape: spec.Shape{KV: 130, Heads: 8, KVHeads: 2, HeadDim: 8}}
		return run(t, s)
	}
	r := scanOf("attn_decode_fixed")
	if r.Certificate == nil || r.Map.Splits() {
		t.Errorf("fixed: no certificate: map %q, diffs %+v", MapWords(r.Map), r.Diffs)
	}
	r = scanOf("attn_decode_sm")
	if r.Certificate != nil {
		t.Fatal("SM rule: certified")
	}
	if want := "batch <= 16 -> A, batch >= 17 -> B"; r.Map.Rule != want {
		t.Errorf("SM rule: map %q (%s), want %q", r.Map.Rule, MapWords(r.Map), want)
	}
}

// prefillCase is an attn_prefill case of seqs sequences of seqLen tokens.
func prefillCase(seqs, seqLen int, in, out spec.DType, seed uint64) spec.Case {
	return spec.Case{Version: spec.CaseVersion, Op: spec.OpAttnPrefill, Relation: spec.RelOracleParity,
		Shape: spec.Shape{Seqs: seqs, SeqLen: seqLen, Heads: 4, KVHeads: 2, HeadDim: 16},
		In:    in, Out: out, Dist: spec.DistNormal, Seed: seed, GenVersion: spec.GeneratorVersion}
}

// TestAttnPrefillTwins: through the manifest's ABI inputs (packed q, k, v
// and cu_seqlens), the fixed example prefill kernel's twin is bitwise
// oracle.Prefill with its declared schedule tile=64 on every batch, and
// the max_seqlen twin is bitwise the drift model drift-attn-maxseqlen-10
// (tile 64 below a max_seqlen of 10, tile 4 from 10 on); their rows are
// equal below 10 and not from 10. (The lse of a row seldom tells tile 4
// from tile 64: the final m is the same, and l only changes where a later
// tile raises the maximum.)
func TestAttnPrefillTwins(t *testing.T) {
	tw := newAttnTwins(t, "attn_prefill_fixed", "tile=64 splits=1", "attn_prefill_maxseqlen", "tile=64 splits=1", "drift-attn-maxseqlen-10")
	for _, tt := range []struct {
		seqs, seqLen int
		in, out      spec.DType
	}{{1, 1, spec.BF16, spec.BF16}, {3, 9, spec.FP32, spec.FP32}, {2, 10, spec.BF16, spec.FP32}, {2, 70, spec.BF16, spec.BF16}, {1, 130, spec.FP16, spec.FP16}} {
		b := caseBatch(t, prefillCase(tt.seqs, tt.seqLen, tt.in, tt.out, uint64(tt.seqLen)))
		name := fmt.Sprintf("%d x %d tokens %s->%s", tt.seqs, tt.seqLen, tt.in, tt.out)
		want, err := oracle.Prefill(*b.Input.(*oracle.PrefillInput), oracle.AttentionSchedule{Tile: 64, Splits: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		gf, gm := tw.run(t, name, b, want)
		same := firstDiff(gf.Values, gm.Values) < 0 && firstDiff(gf.Taps, gm.Taps) < 0
		if below := tt.seqLen < 10; same != below {
			t.Errorf("%s: the twins' rows equal: %v, want %v (tile 64 each: %v)", name, same, below, below)
		}
	}
}

// TestAttnPrefillTwinScans: a scan of the neighbour dimension (a
// co-resident sequence's length 1..20 beside a watched sequence of 8
// queries) certifies the fixed prefill kernel's twin and maps the
// max_seqlen twin exactly at its rule; a scan of the sequences prefilled
// together (all of 12 tokens: max_seqlen never changes) certifies both.
// The output is fp32: the watched rows attend to 8 tokens at most, and
// tile 4's other rounding of them seldom survives rounding to bf16 (nor
// shows in their lse).
func TestAttnPrefillTwinScans(t *testing.T) {
	sh := spec.Shape{SeqLen: 8, Heads: 4, KVHeads: 2, HeadDim: 16}
	neighbour := func(name string) *Result {
		return run(t, spec.ScanSpec{Target: attnTwin(t, name), Op: spec.OpAttnPrefill, Dim: spec.ScanNeighbour, From: 1, To: 20, Shape: sh, Out: spec.FP32})
	}
	if r := neighbour("attn_prefill_fixed"); r.Certificate == nil {
		t.Errorf("fixed, neighbour: no certificate: map %q, diffs %+v", MapWords(r.Map), r.Diffs)
	}
	r := neighbour("attn_prefill_maxseqlen")
	if want := "neighbour <= 9 -> A, neighbour >= 10 -> B"; r.Certificate != nil || r.Map.Rule != want {
		t.Errorf("max_seqlen, neighbour: map %q (%s), want %q", r.Map.Rule, MapWords(r.Map), want)
	}
	for _, name := range []string{"attn_prefill_fixed", "attn_prefill_maxseqlen"} {
		s := spec.ScanSpec{Target: attnTwin(t, name), Op: spec.OpAttnPrefill, From: 1, To: 6,
			Shape: spec.Shape{SeqLen: 12, Heads: 4, KVHeads: 2, HeadDim: 16}}
		if r := run(t, s); r.Certificate == nil {
			t.Errorf("%s, seqs 1..6: no certificate: map %q", name, MapWords(r.Map))
		}
	}
}

// TestAttnTwinLayouts: the example kernels read the batch's layout
// (their manifests say "layout": true, so the scan takes them for chunk,
// prefix and page): the fixed prefill twin is certified on chunks and on
// prefix-cache hits (its q_start rows are the whole prompt's), the
// prefix twin maps the page-aligned path exactly as the control
// drift-attn-prefix-block does, and the fixed decode twin (its paged
// cache in pages of page_size, the batch's Layout.PageSize) is certified
// over page sizes 1..80. On main the manifests had no layout: each scan
// was refused.
func TestAttnTwinLayouts(t *testing.T) {
	sh := spec.Shape{SeqLen: 40, Heads: 4, KVHeads: 2, HeadDim: 16}
	scan := func(name, dim string, from, to int, sh spec.Shape) *Result {
		return run(t, spec.ScanSpec{Target: attnTwin(t, name), Dim: dim, From: from, To: to, Shape: sh, Seed: 1})
	}
	for _, dim := range []string{spec.ScanChunk, spec.ScanPrefix} {
		if r := scan("attn_prefill_fixed", dim, 1, 39, sh); r.Certificate == nil || r.RowsCompared == 0 {
			t.Errorf("fixed, %s: no certificate: map %q, diffs %+v", dim, MapWords(r.Map), r.Diffs)
		}
	}
	r := scan("attn_prefill_prefix", spec.ScanPrefix, 1, 79, spec.Shape{SeqLen: 80, Heads: 4, KVHeads: 2, HeadDim: 16})
	if want := "prefix % 16 == 0 -> B, otherwise -> A"; r.Certificate != nil || r.Map.Rule != want {
		t.Errorf("prefix twin, prefix: map %q (%s), want %q", r.Map.Rule, MapWords(r.Map), want)
	}
	r = scan("attn_decode_fixed", spec.ScanPage, 1, 80, spec.Shape{Rows: 2, KV: 70, Heads: 4, KVHeads: 2, HeadDim: 16})
	if r.Certificate == nil || r.RowsCompared == 0 {
		t.Errorf("fixed decode, page: no certificate: map %q, diffs %+v", MapWords(r.Map), r.Diffs)
	}
}

// TestAttnPrefixTwinIsControl: on a chunk past a cached prefix of every
// length 0..39, the prefix twin's rows of the chunk are bitwise those of
// drift-attn-prefix-block (the same rule, target.PrefixBlockPolicy), and
// the rows below q_start are NaN: the kernel does not write them.
func TestAttnPrefixTwinIsControl(t *testing.T) {
	tw := twinOf(t, exampleAttnManifest(t, "attn_prefill_prefix"), target.SMs)
	if !tw.Info().Layouts {
		t.Fatal("the prefix kernel's target does not read the layout")
	}
	model, err := target.Lookup("drift-attn-prefix-block")
	if err != nil {
		t.Fatal(err)
	}
	b := caseBatch(t, prefillCase(2, 40, spec.BF16, spec.FP32, 7))
	H, D := b.Input.(*oracle.PrefillInput).Heads, b.Input.(*oracle.PrefillInput).HeadDim
	for from := 0; from < 40; from++ {
		g := *b
		g.Layout = target.Layout{ChunkFrom: from}
		got, want := runAll(t, "twin", tw, &g), runAll(t, "model", model, &g)
		for s := range 2 {
			below := got.Values[s*40*H*D : (s*40+from)*H*D]
			if i := slices.IndexFunc(below, func(v float32) bool { return !math.IsNaN(float64(v)) }); i >= 0 {
				t.Fatalf("chunk from %d: sequence %d value %d below q_start is %v, want NaN", from, s, i, below[i])
			}
			lo, hi := (s*40+from)*H*D, (s+1)*40*H*D
			if i := firstDiff(got.Values[lo:hi], want.Values[lo:hi]); i >= 0 {
				t.Fatalf("chunk from %d: sequence %d value %d is %v, the control's %v", from, s, i, got.Values[lo+i], want.Values[lo+i])
			}
		}
	}
}
