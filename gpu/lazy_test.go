//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// hostOnly hides a GPU target's generator: its batches are made on the
// host and uploaded.
type hostOnly struct{ target.Target }

// TestLazyOnDevice checks that the GPU targets make a case's values on the
// device (the batches reach them lazy) and give the verdicts, rows and
// values they give on uploaded batches, for the token ops and attention,
// every distribution the device makes, and the relations that run lazily
// (oracle parity compares the device reference, on the device's inputs,
// with the CPU oracle on the host's: any bit the device generator got
// wrong is a finding there). The lazy checks run as campaign workers 1 to
// 3, on lanes of their own (lanes.go), the uploaded ones on lane 0.
func TestLazyOnDevice(t *testing.T) {
	ctx := context.Background()
	type tc struct {
		target string
		op     spec.Op
		shape  spec.Shape
		params spec.RelParams
		dist   spec.Dist // "": the i-th of dists
	}
	cases := []tc{
		{"cuda-drift-rmsnorm-te-mod32", spec.OpRMSNorm, spec.Shape{Rows: 64, Hidden: 96}, spec.RelParams{Row: 5, Batch: 32, Position: 3, PermSeed: 7}, ""},
		{"cuda-rmsnorm", spec.OpRMSNorm, spec.Shape{Rows: 300, Hidden: 4096}, spec.RelParams{Row: 299, Batch: 50, Position: 45, PermSeed: 2}, ""},
		{"cuda-drift-gemm-splitk-by-m", spec.OpGEMM, spec.Shape{Rows: 70, Hidden: 48, N: 8}, spec.RelParams{Row: 3, Batch: 2, Position: 1, PermSeed: 3}, ""},
		{"cuda-drift-order-logprob-rows132", spec.OpLogProb, spec.Shape{Rows: 140, Vocab: 300}, spec.RelParams{Row: 131, Batch: 7, Position: 6, PermSeed: 4}, ""},
		{"cuda-drift-decode-splits-by-batch", spec.OpAttnDecode, spec.Shape{Rows: 20, KV: 300, KVLens: []int{300, 37, 129}, Heads: 8, KVHeads: 2, HeadDim: 64},
			spec.RelParams{Row: 3, Batch: 25, Position: 2, PermSeed: 5}, ""},
		{"cuda-attn_decode", spec.OpAttnDecode, spec.Shape{Rows: 4, KV: 4096, Heads: 8, KVHeads: 2, HeadDim: 128}, spec.RelParams{Row: 1, Batch: 2, Position: 1, PermSeed: 9}, ""},
		{"cuda-drift-attn-tile48", spec.OpAttnPrefill, spec.Shape{Seqs: 3, SeqLen: 60, Heads: 4, KVHeads: 2, HeadDim: 32}, spec.RelParams{Row: 1, Batch: 4, Position: 3, PermSeed: 1}, ""},
		{"cuda-attn_prefill", spec.OpAttnPrefill, spec.Shape{Seqs: 5, SeqLen: 33, Heads: 2, KVHeads: 1, HeadDim: 16}, spec.RelParams{Row: 4, Batch: 2, Position: 0, PermSeed: 3}, ""},
		// boundary rmsnorm and gemm: nudged on the device (nudge.go)
		{"cuda-drift-rmsnorm-te-mod32", spec.OpRMSNorm, spec.Shape{Rows: 64, Hidden: 96}, spec.RelParams{Row: 5, Batch: 32, Position: 3, PermSeed: 7}, spec.DistBoundary},
		{"cuda-drift-rmsnorm-vllm-256", spec.OpRMSNorm, spec.Shape{Rows: 300, Hidden: 1024}, spec.RelParams{Row: 299, Batch: 7, Position: 3, PermSeed: 9}, spec.DistBoundary},
		{"cuda-rmsnorm", spec.OpRMSNorm, spec.Shape{Rows: 100, Hidden: 4096}, spec.RelParams{Row: 99, Batch: 40, Position: 30, PermSeed: 2}, spec.DistBoundary},
		{"cuda-drift-gemm-splitk-by-m", spec.OpGEMM, spec.Shape{Rows: 70, Hidden: 48, N: 8}, spec.RelParams{Row: 3, Batch: 2, Position: 1, PermSeed: 3}, spec.DistBoundary},
		{"cuda-gemm", spec.OpGEMM, spec.Shape{Rows: 40, Hidden: 1024, N: 64}, spec.RelParams{Row: 39, Batch: 20, Position: 7, PermSeed: 5}, spec.DistBoundary},
	}
	dists := []spec.Dist{spec.DistNormal, spec.DistHeavy, spec.DistOutlier, spec.DistSignedZero, spec.DistTies}
	found := 0
	for ri, rel := range []string{spec.RelBatchInvariance, spec.RelDeterminism, spec.RelOracleParity, spec.RelPadding} {
		for i, k := range cases {
			dist := dists[i%len(dists)]
			if k.dist != "" {
				dist = k.dist
			}
			if rel == spec.RelPadding { // every filler over the cases: rows made on the device, filler rows too
				k.params = spec.RelParams{Pad: k.shape.Rows + 40, Filler: string(spec.Fillers[(ri+i)%len(spec.Fillers)])}
			}
			t.Run(fmt.Sprintf("%s/%s/%s/%s", rel, k.target, dist, k.params.Filler), func(t *testing.T) {
				tg, err := target.Lookup(k.target)
				if err != nil {
					t.Fatal(err)
				}
				c := spec.Case{Version: spec.CaseVersion, GenVersion: 2, Op: k.op, Relation: rel, Targets: []string{k.target},
					In: spec.BF16, Out: spec.BF16, Dist: dist, Seed: 11 + uint64(i), Eps: 1e-6, Shape: k.shape, Rel: k.params}
				if k.op == spec.OpLogProb {
					c.Out = spec.FP32
				}
				want, err := fuzz.Check(ctx, c, hostOnly{tg})
				if err != nil {
					t.Fatal(err)
				}
				var lazy atomic.Int64 // on a lane of its own, as a campaign worker's check
				got, err := fuzz.Check(target.WithWorker(ctx, 1+i%3), c, countLazy{Target: tg, lazy: &lazy})
				if err != nil {
					t.Fatal(err)
				}
				attnPadding := rel == spec.RelPadding && (k.op == spec.OpAttnDecode || k.op == spec.OpAttnPrefill) // padded on the host
				if lazy.Load() == 0 && rel != spec.RelOracleParity && !attnPadding {
					t.Error("the GPU target never got a lazy batch")
				}
				if (want == nil) != (got == nil) {
					t.Fatalf("made on the device: finding %v; uploaded: %v", got != nil, want != nil)
				}
				if want == nil {
					return
				}
				found++
				if got.Row != want.Row || got.Col != want.Col || got.A != want.A || got.B != want.B || got.Signature != want.Signature {
					t.Errorf("made on the device: row %d col %d %s/%s sig %s; uploaded: row %d col %d %s/%s sig %s",
						got.Row, got.Col, got.A, got.B, got.Signature, want.Row, want.Col, want.A, want.B, want.Signature)
				}
			})
		}
	}
	if found == 0 {
		t.Error("no case gave a finding: the comparison of findings was never made")
	}
}
