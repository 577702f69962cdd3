package inputs

import (
	"fmt"
	"math"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestLazyItems checks lazy batches built from lazy batches: item numbers
// compose, items past the case's own come from its generator, and the
// values are Inputs' bits.
func TestLazyItems(t *testing.T) {
	for _, d := range []spec.Dist{spec.DistNormal, spec.DistBoundary} {
		t.Run(string(d), func(t *testing.T) { testLazyItems(t, d) })
	}
}

// testLazyItems is TestLazyItems for rmsnorm cases of dist d (boundary:
// the rows nudged as the items they copy).
func testLazyItems(t *testing.T, d spec.Dist) {
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
		In: spec.BF16, Out: spec.BF16, Dist: d, Seed: 5, Eps: 1e-6, Shape: spec.Shape{Rows: 6, Hidden: 16}}
	b, err := lazyBatch(&target.Source{Case: c, Tensor: itemTensor(c)}, 6, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := lazyItems(b, []int{4, 9, 0})
	if err != nil {
		t.Fatal(err)
	}
	h, err := lazyItems(g, []int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Source.Items; len(got) != 2 || got[0] != 9 || got[1] != 0 {
		t.Fatalf("composed items %v, want [9 0]", got)
	}
	if !h.Lazy() || h.Input.(*oracle.RMSNormInput).X != nil {
		t.Fatal("a lazy batch holds values before Materialize")
	}
	if err := h.Materialize(); err != nil {
		t.Fatal(err)
	}
	all, err := Of(WithItems(c, 10))
	if err != nil {
		t.Fatal(err)
	}
	hx, ax := h.Input.(*oracle.RMSNormInput).X, all.Input.(*oracle.RMSNormInput).X
	for i, id := range []int{9, 0} {
		for j := 0; j < 16; j++ {
			if hx[i*16+j] != ax[id*16+j] {
				t.Fatalf("item %d value %d: %v, want item %d's %v", i, j, hx[i*16+j], id, ax[id*16+j])
			}
		}
	}
	if _, err := lazyItems(g, []int{3}); err == nil {
		t.Error("item 3 of a 3-item lazy batch: no error")
	}
}

// TestLazyAttentionItems checks lazy attention batches: items of items,
// items past the case's own, and the KV length of each request follow the
// case's generator, and Materialize gives Inputs' bits for Q, K and V.
func TestLazyAttentionItems(t *testing.T) {
	cases := []spec.Case{
		{Op: spec.OpAttnDecode, Shape: spec.Shape{Rows: 6, KV: 9, KVLens: []int{9, 4, 7}, Heads: 4, KVHeads: 2, HeadDim: 8}},
		{Op: spec.OpAttnPrefill, Shape: spec.Shape{Seqs: 6, SeqLen: 5, Heads: 4, KVHeads: 1, HeadDim: 8}},
	}
	for _, c := range cases {
		t.Run(string(c.Op), func(t *testing.T) {
			c.Version, c.GenVersion, c.In, c.Out, c.Dist, c.Seed = spec.CaseVersion, spec.GeneratorVersion, spec.BF16, spec.BF16, spec.DistHeavy, 5
			b, err := lazyBatch(&target.Source{Case: c, QKV: attnTensors(c)}, 6, nil)
			if err != nil {
				t.Fatal(err)
			}
			g, err := lazyItems(b, []int{4, 9, 0, 10})
			if err != nil {
				t.Fatal(err)
			}
			h, err := lazyItems(g, []int{1, 3, 2})
			if err != nil {
				t.Fatal(err)
			}
			if got := h.Source.Items; fmt.Sprint(got) != "[9 10 0]" {
				t.Fatalf("composed items %v, want [9 10 0]", got)
			}
			if !h.Lazy() || h.Items() != 3 {
				t.Fatalf("lazy %v with %d items, want a lazy batch of 3", h.Lazy(), h.Items())
			}
			if err := h.Materialize(); err != nil {
				t.Fatal(err)
			}
			all, err := Of(WithItems(c, 11))
			if err != nil {
				t.Fatal(err)
			}
			want, err := gather(all, []int{9, 10, 0})
			if err != nil {
				t.Fatal(err)
			}
			type tensors struct{ q, k, v []float32 }
			of := func(b *target.Batch) tensors {
				if d, ok := b.Input.(*oracle.DecodeInput); ok && d != nil {
					var k, v []float32
					for r := range d.K {
						k, v = append(k, d.K[r]...), append(v, d.V[r]...)
					}
					return tensors{d.Q, k, v}
				}
				p := b.Input.(*oracle.PrefillInput)
				return tensors{p.Q, p.K, p.V}
			}
			gt, wt := of(h), of(want)
			for _, x := range []struct {
				name      string
				got, want []float32
			}{{"q", gt.q, wt.q}, {"k", gt.k, wt.k}, {"v", gt.v, wt.v}} {
				if len(x.got) != len(x.want) {
					t.Fatalf("%s: %d values, want %d", x.name, len(x.got), len(x.want))
				}
				for i := range x.got {
					if math.Float32bits(x.got[i]) != math.Float32bits(x.want[i]) {
						t.Fatalf("%s value %d: %v, want %v", x.name, i, x.got[i], x.want[i])
					}
				}
			}
			if d, ok := h.Input.(*oracle.DecodeInput); ok && d != nil {
				for r, it := range []int{9, 10, 0} {
					if got, want := len(d.K[r]), c.Shape.KVLen(it)*c.Shape.KVHeads*c.Shape.HeadDim; got != want {
						t.Errorf("request %d (item %d): %d cached values, want %d", r, it, got, want)
					}
				}
			}
		})
	}
}

// TestLazyPadded checks that a lazy batch padded by item numbers and
// filler rows (padBatch) materializes to the bits padded makes on the
// host, values and log-prob targets, for every filler and token op.
func TestLazyPadded(t *testing.T) {
	shapes := map[spec.Op]spec.Shape{
		spec.OpRMSNorm: {Rows: 5, Hidden: 16},
		spec.OpGEMM:    {Rows: 5, Hidden: 8, N: 3},
		spec.OpLogProb: {Rows: 5, Vocab: 40},
	}
	type opDist struct {
		op   spec.Op
		dist spec.Dist
	}
	var runs []opDist
	for op := range shapes {
		runs = append(runs, opDist{op, spec.DistNormal})
	}
	runs = append(runs, opDist{spec.OpRMSNorm, spec.DistBoundary}, opDist{spec.OpGEMM, spec.DistBoundary})
	for _, r := range runs {
		op := r.op
		shape := shapes[op]
		for _, sf := range spec.Fillers {
			f := string(sf)
			t.Run(fmt.Sprintf("%s/%s/%s", op, r.dist, f), func(t *testing.T) {
				c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: op, Relation: spec.RelPadding,
					In: spec.BF16, Out: spec.BF16, Dist: r.dist, Seed: 9, Eps: 1e-6, Shape: shape,
					Rel: spec.RelParams{Pad: 12, Filler: f}}
				eager, err := Of(c)
				if err != nil {
					t.Fatal(err)
				}
				want, err := padded(c, eager, 12, f)
				if err != nil {
					t.Fatal(err)
				}
				b, err := lazyBatch(&target.Source{Case: c, Tensor: itemTensor(c)}, 5, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err := PadCase(c, b, 12, f)
				if err != nil {
					t.Fatal(err)
				}
				if !got.Lazy() {
					t.Fatal("a lazy batch padded: not lazy")
				}
				if err := got.Materialize(); err != nil {
					t.Fatal(err)
				}
				type vals struct {
					x []float32
					t []int32
				}
				of := func(b *target.Batch) vals {
					switch op {
					case spec.OpRMSNorm:
						return vals{x: b.Input.(*oracle.RMSNormInput).X}
					case spec.OpGEMM:
						return vals{x: b.Input.(*oracle.GEMMInput).X}
					}
					return vals{x: b.Input.(*oracle.LogProbInput).Logits, t: b.Input.(*oracle.LogProbInput).Targets}
				}
				g, w := of(got), of(want)
				if len(g.x) != len(w.x) || len(g.t) != len(w.t) {
					t.Fatalf("%d values %d targets, want %d, %d", len(g.x), len(g.t), len(w.x), len(w.t))
				}
				for i := range w.x {
					if math.Float32bits(g.x[i]) != math.Float32bits(w.x[i]) {
						t.Fatalf("value %d: %#x, host %#x", i, math.Float32bits(g.x[i]), math.Float32bits(w.x[i]))
					}
				}
				for i := range w.t {
					if g.t[i] != w.t[i] {
						t.Fatalf("target %d: %d, host %d", i, g.t[i], w.t[i])
					}
				}
			})
		}
	}
}
