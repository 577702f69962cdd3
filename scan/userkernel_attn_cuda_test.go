//go:build cuda

package scan

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// attnKernel loads example manifest name on the GPU as kernel:NAME (in
// this process) and returns it with its CPU twin for this device's SMs.
func attnKernel(t *testing.T, name string) (target.Target, decodeTwin) {
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
	return k, decodeTwin{m: m, splits: decodeSplits[m.Entry], sms: d.SMs()}
}

// TestAttnKernelsTwins: each example decode kernel on the GPU gives its
// CPU twin's bits, outputs and lse taps, on every dtype pair and on both
// sides of its split rule.
func TestAttnKernelsTwins(t *testing.T) {
	kvs := []int{200, 37, 64, 1, 129, 300}
	for _, name := range []string{"attn_decode_fixed", "attn_decode_sm"} {
		k, twin := attnKernel(t, name)
		for _, requests := range []int{1, 5, 16, 17, 24, 40} {
			for _, dt := range [][2]spec.DType{{spec.BF16, spec.BF16}, {spec.FP16, spec.FP16}, {spec.FP32, spec.FP32}, {spec.BF16, spec.FP32}} {
				b, err := fuzz.Inputs(decodeCase(requests, kvs, dt[0], dt[1], uint64(requests)))
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s, %d requests %s->%s", name, requests, dt[0], dt[1])
				got, err := k.Run(context.Background(), b, nil)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				want, err := twin.Run(context.Background(), b, nil)
				if err != nil {
					t.Fatal(err)
				}
				if i := firstDiff(got.Values, want.Values); i >= 0 {
					t.Errorf("%s: value %d is %v on the GPU, %v in the twin", what, i, got.Values[i], want.Values[i])
				}
				if got.TapCols != 1 {
					t.Errorf("%s: %d tap columns, want 1 (lse)", what, got.TapCols)
				} else if i := firstDiff(got.Taps, want.Taps); i >= 0 {
					t.Errorf("%s: lse %d is %v on the GPU, %v in the twin", what, i, got.Taps[i], want.Taps[i])
				}
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
			k, twin := attnKernel(t, name)
			s := spec.ScanSpec{Target: k.Info().Name, Op: spec.OpAttnDecode, From: 1, To: tt.to, Shape: tt.shape,
				Dists: []spec.Dist{spec.DistNormal}}
			start := time.Now()
			r := run(t, s)
			t.Logf("%s over requests 1..%d at %+v: %s, %d batches, %v", name, tt.to, tt.shape, MapWords(r.Map), r.Batches, time.Since(start))
			var want string
			if name == "attn_decode_sm" {
				last := (twin.sms + tt.shape.Heads - 1) / tt.shape.Heads // the most requests with requests*heads < sms
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
