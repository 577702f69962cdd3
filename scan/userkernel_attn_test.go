package scan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
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

// decodeTwin is the CPU twin of an example decode kernel: target
// "twin:NAME", claiming what the manifest claims.
type decodeTwin struct {
	m      *gpu.Manifest
	splits func(requests, heads, sms int64) int64
	sms    int // the multiprocessors of the device it stands for
}

func (k decodeTwin) Info() target.Info {
	i := k.m.Info("cpu")
	i.Name = "twin:" + k.m.Name
	return i
}

func (k decodeTwin) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if b.Op != spec.OpAttnDecode {
		return nil, fmt.Errorf("twin: %s", b.Op)
	}
	a, err := gpu.KernelInputs(b, k.sms)
	if err != nil {
		return nil, err
	}
	y, lse := twinDecode(a, k.splits, b.Out)
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
				t1 := min(t0+tile, bd[1])
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
						acc[d] = oracle.FMA32(p, vc[at(j)+d], acc[d])
					}
				}
				m = mt
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

// attnTwin registers the twin of example manifest name and returns its
// target name.
func attnTwin(t *testing.T, name string) string {
	t.Helper()
	m := exampleAttnManifest(t, name)
	tw := decodeTwin{m: m, splits: decodeSplits[m.Entry], sms: target.SMs}
	if tw.splits == nil {
		t.Fatalf("no twin of entry %s", m.Entry)
	}
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
	fixed := exampleAttnManifest(t, "attn_decode_fixed")
	sm := exampleAttnManifest(t, "attn_decode_sm")
	if fixed.Schedule != "tile=64 splits=4" || sm.Schedule != "tile=64 splits=1" {
		t.Fatalf("declared schedules %q and %q", fixed.Schedule, sm.Schedule)
	}
	model, err := target.Lookup("drift-decode-splits-by-batch")
	if err != nil {
		t.Fatal(err)
	}
	kvs := []int{200, 37, 64, 1, 129, 300}
	for _, tt := range []struct {
		requests int
		in, out  spec.DType
	}{{1, spec.BF16, spec.BF16}, {5, spec.FP32, spec.FP32}, {16, spec.BF16, spec.BF16}, {17, spec.BF16, spec.FP32}, {24, spec.FP16, spec.FP16}} {
		b, err := fuzz.Inputs(decodeCase(tt.requests, kvs, tt.in, tt.out, uint64(tt.requests)))
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%d requests %s->%s", tt.requests, tt.in, tt.out)
		want, err := oracle.Decode(*b.Decode, oracle.AttentionSchedule{Tile: 64, Splits: 4}, nil)
		if err != nil {
			t.Fatal(err)
		}
		gf, err := decodeTwin{fixed, decodeSplits[fixed.Entry], target.SMs}.Run(context.Background(), b, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i := firstDiff(gf.Values, want); i >= 0 {
			t.Errorf("%s: fixed twin value %d is %v, oracle tile=64 splits=4 %v", name, i, gf.Values[i], want[i])
		}
		gs, err := decodeTwin{sm, decodeSplits[sm.Entry], target.SMs}.Run(context.Background(), b, nil)
		if err != nil {
			t.Fatal(err)
		}
		wm, err := model.Run(context.Background(), b, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i := firstDiff(gs.Values, wm.Values); i >= 0 {
			t.Errorf("%s: SM twin value %d is %v, drift-decode-splits-by-batch %v", name, i, gs.Values[i], wm.Values[i])
		}
		lseSame := firstDiff(gf.Taps, gs.Taps) < 0
		if split := tt.requests*8 < target.SMs; lseSame != split {
			t.Errorf("%s: the twins' lse equal: %v, want %v (4 splits each: %v)", name, lseSame, split, split)
		}
	}
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
