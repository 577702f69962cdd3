package relate

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// generating is a CPU target that claims to make a lazy batch's values
// itself (as a GPU target with the device generator does): its Run
// materializes the batch and counts the lazy batches it was handed.
type generating struct {
	target.Target
	lazy *atomic.Int64
}

func (g generating) Generates(*target.Source) bool { return true }

func (g generating) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if b.Lazy() {
		g.lazy.Add(1)
		if err := b.Materialize(); err != nil {
			return nil, err
		}
	}
	return g.Target.Run(ctx, b, rows)
}

// TestLazyBatchesSameVerdicts checks that a relation run on lazy batches
// (every target generating) gives the same verdict, row and values as on
// batches made by Inputs, that the generating target is handed lazy
// batches, and that a target that does not generate (the CPU oracle of
// oracle parity) is handed values.
func TestLazyBatchesSameVerdicts(t *testing.T) {
	ctx := context.Background()
	type tc struct {
		target string
		op     spec.Op
		rel    string
		shape  spec.Shape
		params spec.RelParams
		dist   spec.Dist // "": normal
	}
	var cases []tc
	for _, sf := range spec.Fillers {
		f := string(sf)
		cases = append(cases,
			tc{"drift-rmsnorm-te-mod32", spec.OpRMSNorm, spec.RelPadding, spec.Shape{Rows: 40, Hidden: 96}, spec.RelParams{Pad: 64, Filler: f}, ""},
			tc{"drift-gemm-splitk-by-m", spec.OpGEMM, spec.RelPadding, spec.Shape{Rows: 40, Hidden: 48, N: 8}, spec.RelParams{Pad: 70, Filler: f}, ""},
			tc{"oracle-logprob", spec.OpLogProb, spec.RelPadding, spec.Shape{Rows: 100, Vocab: 300}, spec.RelParams{Pad: 140, Filler: f}, ""},
			tc{"drift-rmsnorm-te-mod32", spec.OpRMSNorm, spec.RelPadding, spec.Shape{Rows: 40, Hidden: 96}, spec.RelParams{Pad: 64, Filler: f}, spec.DistBoundary},
			tc{"drift-gemm-splitk-by-m", spec.OpGEMM, spec.RelPadding, spec.Shape{Rows: 40, Hidden: 48, N: 8}, spec.RelParams{Pad: 70, Filler: f}, spec.DistBoundary},
		)
	}
	for _, rel := range []string{spec.RelBatchInvariance, spec.RelDeterminism, spec.RelOracleParity, spec.RelCrossDevice} {
		cases = append(cases,
			tc{"drift-rmsnorm-te-mod32", spec.OpRMSNorm, rel, spec.Shape{Rows: 64, Hidden: 96}, spec.RelParams{Row: 5, Batch: 32, Position: 3, PermSeed: 7}, ""},
			tc{"oracle-rmsnorm", spec.OpRMSNorm, rel, spec.Shape{Rows: 40, Hidden: 64}, spec.RelParams{Row: 39, Batch: 50, Position: 45, PermSeed: 2}, ""},
			tc{"drift-rmsnorm-te-mod32", spec.OpRMSNorm, rel, spec.Shape{Rows: 64, Hidden: 96}, spec.RelParams{Row: 5, Batch: 32, Position: 3, PermSeed: 7}, spec.DistBoundary},
			tc{"drift-rmsnorm-vllm-256", spec.OpRMSNorm, rel, spec.Shape{Rows: 300, Hidden: 64}, spec.RelParams{Row: 299, Batch: 7, Position: 3, PermSeed: 9}, spec.DistBoundary},
			tc{"drift-gemm-splitk-by-m", spec.OpGEMM, rel, spec.Shape{Rows: 70, Hidden: 48, N: 8}, spec.RelParams{Row: 3, Batch: 2, Position: 1, PermSeed: 3}, spec.DistBoundary},
			tc{"drift-gemm-splitk-by-m", spec.OpGEMM, rel, spec.Shape{Rows: 70, Hidden: 48, N: 8}, spec.RelParams{Row: 3, Batch: 2, Position: 1, PermSeed: 3}, ""},
			tc{"oracle-logprob", spec.OpLogProb, rel, spec.Shape{Rows: 132, Vocab: 300}, spec.RelParams{Row: 131, Batch: 7, Position: 6, PermSeed: 4}, ""},
			tc{"drift-decode-splits-by-batch", spec.OpAttnDecode, rel, spec.Shape{Rows: 20, KV: 100, KVLens: []int{100, 37, 64}, Heads: 8, KVHeads: 2, HeadDim: 32},
				spec.RelParams{Row: 3, Batch: 25, Position: 2, PermSeed: 5}, ""},
			tc{"drift-attn-tile48", spec.OpAttnPrefill, rel, spec.Shape{Seqs: 3, SeqLen: 60, Heads: 4, KVHeads: 2, HeadDim: 16},
				spec.RelParams{Row: 1, Batch: 4, Position: 3, PermSeed: 1}, ""},
		)
	}
	found := 0
	defer func() {
		if found == 0 {
			t.Error("no case gave a finding: the comparison of findings was never made")
		}
	}()
	for _, k := range cases {
		t.Run(fmt.Sprintf("%s/%s/%s/%s", k.rel, k.target, k.dist, k.params.Filler), func(t *testing.T) {
			base, err := target.Lookup(k.target)
			if err != nil {
				t.Fatal(err)
			}
			c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: k.op, Relation: k.rel,
				Targets: []string{k.target}, In: spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 11, Eps: 1e-6,
				Shape: k.shape, Rel: k.params}
			if k.dist != "" {
				c.Dist = k.dist
			}
			want, err := Check(ctx, c, base)
			if err != nil {
				t.Fatal(err)
			}
			var n atomic.Int64
			got, err := Check(ctx, c, generating{base, &n})
			if err != nil {
				t.Fatal(err)
			}
			if n.Load() == 0 && k.rel != spec.RelOracleParity { // there the CPU oracle runs first, on values
				t.Error("the generating target was never handed a lazy batch")
			}
			if (want == nil) != (got == nil) {
				t.Fatalf("lazy finding %v, eager %v", got != nil, want != nil)
			}
			if want == nil {
				return
			}
			found++
			if got.Row != want.Row || got.Col != want.Col || got.A != want.A || got.B != want.B || got.Signature != want.Signature {
				t.Errorf("lazy finding row %d col %d %s/%s sig %s, eager row %d col %d %s/%s sig %s",
					got.Row, got.Col, got.A, got.B, got.Signature, want.Row, want.Col, want.A, want.B, want.Signature)
			}
		})
	}
}
