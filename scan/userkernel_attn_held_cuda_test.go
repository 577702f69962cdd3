//go:build cuda

package scan

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// stepwiseKernel is a user kernel that the scan does not hold (it is not
// the target gpu.HoldUserKernel takes): every step is a batch made on the
// host, uploaded whole and run (Run), as scans of attention kernels ran
// before their batches were held.
type stepwiseKernel struct{ target.Target }

func (k stepwiseKernel) Info() target.Info {
	i := k.Target.Info()
	i.Name = "stepwise:" + i.Name
	return i
}

// stepwiseOf registers the stepwise twin of kernel k and returns its name.
func stepwiseOf(k target.Target) string {
	s := stepwiseKernel{k}
	n := s.Info().Name
	if _, err := target.Lookup(n); err != nil {
		target.Register(n, func() (target.Target, error) { return s, nil })
	}
	return n
}

// TestAttnKernelsHeld: scans of the example attention kernels hold each
// draw's largest batch on the device (gpu.HoldUserKernel: Result.Resident)
// and give the per-step scans' results (the kernel wrapped so that the
// scan cannot hold it): the same maps, certificates and differing rows.
// Decode: the requests x KV grid over requests 1..256 at KV 1, 64, 65
// and 130 (32 heads, 8 KV heads, head dim 32: the SM rule splits 4 ways
// below 5 requests on 132 SMs, and only past one 64-token tile shows
// it). Prefill: sequences 1..64 of 8 and 130 tokens. Each scan's time is
// logged, held and per step.
func TestAttnKernelsHeld(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"attn_decode_fixed", "attn_decode_sm"} {
		k, _, _ := attnKernel(t, name)
		s := spec.ScanSpec{Target: k.Info().Name, Op: spec.OpAttnDecode, From: 1, To: 256,
			Shape: spec.Shape{Heads: 32, KVHeads: 8, HeadDim: 32}, Dists: []spec.Dist{spec.DistNormal}}
		kvs := []int{1, 64, 65, 130}
		start := time.Now()
		held, err := ScanGrid(ctx, s, kvs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		heldTime := time.Since(start)
		s.Target = stepwiseOf(k)
		start = time.Now()
		step, err := ScanGrid(ctx, s, kvs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s, requests 1..256 x kv %v: %s; held %v, per step %v", name, kvs, held.Rule, heldTime, time.Since(start))
		if held.Rule != step.Rule || !reflect.DeepEqual(held.KV, step.KV) {
			t.Errorf("%s: held grid %q, per step %q", name, held.Rule, step.Rule)
		}
		for kv, r := range held.Scans {
			sameHeldScan(t, fmt.Sprintf("%s, kv %d", name, kv), r, step.Scans[kv])
		}
	}
	for _, name := range []string{"attn_prefill_fixed", "attn_prefill_maxseqlen"} {
		k, _, _ := attnKernel(t, name)
		for _, L := range []int{8, 130} {
			s := spec.ScanSpec{Target: k.Info().Name, Op: spec.OpAttnPrefill, From: 1, To: 64,
				Shape: spec.Shape{SeqLen: L, Heads: 32, KVHeads: 8, HeadDim: 32}, Out: spec.FP32, Dists: []spec.Dist{spec.DistNormal}}
			start := time.Now()
			held := run(t, s)
			heldTime := time.Since(start)
			s.Target = stepwiseOf(k)
			start = time.Now()
			step := run(t, s)
			what := fmt.Sprintf("%s, sequences 1..64 of %d tokens", name, L)
			t.Logf("%s: %s; held %v, per step %v", what, MapWords(held.Map), heldTime, time.Since(start))
			sameHeldScan(t, what, held, step)
		}
	}
}

// TestAttnKernelsHeldLlama: held scans of both example decode kernels at
// llama3-8b (32 heads, 8 KV heads, head dim 128, bf16), one normal draw,
// on two grids: requests 1..256 x KV 1, 64, 65, 66 and 500, and
// requests 1..31 x KV 1, 64, 65, 66 and 4096. A case may hold at most spec.MaxElements
// input values (the caches of 256 requests of 4096 tokens are 2^31), so
// each grid is the most requests its longest KV length allows. The fixed
// kernel is certified at every KV length, the SM kernel up to KV 65 and
// mapped at its rule from 66 on: up to 64 tokens one tile holds the
// cache, and at 65 the second split holds one token, whose combine
// (fma(w1, v, w0·acc0), w0·l0 + w1) runs the operations of the one-split
// kernel's last tile of one token; each grid's rule and time are logged.
func TestAttnKernelsHeldLlama(t *testing.T) {
	ctx := context.Background()
	grids := []struct {
		requests int
		kvs      []int
	}{{256, []int{1, 64, 65, 66, 500}}, {31, []int{1, 64, 65, 66, 4096}}}
	for _, name := range []string{"attn_decode_fixed", "attn_decode_sm"} {
		k, _, sms := attnKernel(t, name)
		last := (sms+31)/32 - 1 // the most requests with requests*32 < sms
		for _, gr := range grids {
			s := spec.ScanSpec{Target: k.Info().Name, Op: spec.OpAttnDecode, From: 1, To: gr.requests,
				Shape: spec.Shape{Heads: 32, KVHeads: 8, HeadDim: 128}, Dists: []spec.Dist{spec.DistNormal}}
			start := time.Now()
			g, err := ScanGrid(ctx, s, gr.kvs, Options{})
			if err != nil {
				t.Fatalf("%s, requests 1..%d x kv %v: %v", name, gr.requests, gr.kvs, err)
			}
			t.Logf("%s, requests 1..%d x kv %v, llama3-8b, held: %s, %v", name, gr.requests, gr.kvs, g.Rule, time.Since(start))
			for kv, r := range g.Scans {
				want := "" // certified
				if name == "attn_decode_sm" && kv >= 66 {
					want = fmt.Sprintf("batch <= %d -> A, batch >= %d -> B", last, last+1)
				}
				t.Logf("%s, kv %d: %s, %d batches, %v", name, kv, MapWords(r.Map), r.Batches, r.Elapsed)
				if !r.Resident || (want == "") != (r.Certificate != nil) || want != "" && r.Map.Rule != want {
					t.Errorf("%s at kv %d: resident %v, map %q, want %q", name, kv, r.Resident, r.Map.Rule, want)
				}
			}
		}
	}
}

// sameHeldScan fails unless held scan result got, resident, has the map,
// certificate (or none) and differing rows of per-step result want.
func sameHeldScan(t *testing.T, what string, got, want *Result) {
	t.Helper()
	if got == nil || want == nil {
		t.Fatalf("%s: held %v, per step %v", what, got != nil, want != nil)
	}
	if !got.Resident || want.Resident {
		t.Errorf("%s: resident %v held, %v per step", what, got.Resident, want.Resident)
	}
	if !reflect.DeepEqual(got.Map, want.Map) || (got.Certificate == nil) != (want.Certificate == nil) || got.Differing != want.Differing {
		t.Errorf("%s: held map %q (%s), certified %v, %d differing; per step %q (%s), %v, %d", what,
			got.Map.Rule, MapWords(got.Map), got.Certificate != nil, got.Differing,
			want.Map.Rule, MapWords(want.Map), want.Certificate != nil, want.Differing)
	}
}
