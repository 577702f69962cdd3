package gpu

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// heldSteps are the step lists a held batch of n items is asked for: the
// prefixes 1, 2 and n, a gather out of order with a repeat, and every
// item alone.
func heldSteps(n int) [][]int {
	steps := [][]int{{0}, spec.Iota(n), {n - 1, 0, n / 2, n / 2}}
	if n > 2 {
		steps = append(steps, []int{0, 1})
	}
	for i := range n {
		steps = append(steps, []int{i})
	}
	return steps
}

// TestHeldAttnInputs: the ABI inputs of a step of a held attention batch
// (HeldAttnInputs: per-item slabs gathered, the paged cache shared, the
// block table, kv_lens and cu_seqlens made per step) are KernelInputs of
// the gathered batch with the held batch's layout, over decode and
// prefill, page sizes, chunks, prefixes, gathers and items alone: every
// size but decode's pages (the held cache's count, at least the step's),
// every per-item tensor bit for bit, and each request's K and V tokens
// read through its block table.
func TestHeldAttnInputs(t *testing.T) {
	decode := func(lens []int) spec.Case {
		return spec.Case{Version: spec.CaseVersion, Op: spec.OpAttnDecode, Relation: spec.RelOracleParity,
			Shape: spec.Shape{Rows: len(lens), KV: lens[0], KVLens: lens, Heads: 4, KVHeads: 2, HeadDim: 3},
			In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 11, GenVersion: spec.GeneratorVersion}
	}
	prefill := func(seqs, seqLen int) spec.Case {
		return spec.Case{Version: spec.CaseVersion, Op: spec.OpAttnPrefill, Relation: spec.RelOracleParity,
			Shape: spec.Shape{Seqs: seqs, SeqLen: seqLen, Heads: 4, KVHeads: 2, HeadDim: 3},
			In:    spec.FP16, Out: spec.FP16, Dist: spec.DistNormal, Seed: 5, GenVersion: spec.GeneratorVersion}
	}
	lens := []int{40, 1, 16, 17, 3, 33}
	for _, tt := range []struct {
		name   string
		c      spec.Case
		layout target.Layout
	}{
		{"decode default pages", decode(lens), target.Layout{}},
		{"decode pages of 1", decode(lens), target.Layout{PageSize: 1}},
		{"decode pages of 3", decode(lens), target.Layout{PageSize: 3}},
		{"decode pages of 16", decode(lens), target.Layout{PageSize: 16}},
		{"decode pages of 64", decode(lens), target.Layout{PageSize: 64}},
		{"decode one request", decode([]int{5}), target.Layout{PageSize: 2}},
		{"prefill whole", prefill(5, 7), target.Layout{}},
		{"prefill chunk from 3", prefill(5, 7), target.Layout{ChunkFrom: 3}},
		{"prefill chunk from 6", prefill(5, 7), target.Layout{ChunkFrom: 6}},
		{"prefill one token", prefill(3, 1), target.Layout{}},
	} {
		b, err := inputs.Of(tt.c)
		if err != nil {
			t.Fatal(err)
		}
		b.Layout = tt.layout
		held, err := KernelInputs(b, 132)
		if err != nil {
			t.Fatal(err)
		}
		for _, ids := range heldSteps(b.Items()) {
			name := fmt.Sprintf("%s, items %v", tt.name, ids)
			got, err := HeldAttnInputs(held, ids)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			g, err := inputs.Gather(b, ids)
			if err != nil {
				t.Fatal(err)
			}
			g.Layout = b.Layout
			want, err := KernelInputs(g, 132)
			if err != nil {
				t.Fatal(err)
			}
			sameStepInputs(t, name, got, want, held)
			if off, ok := consecutive(ids); ok {
				sameInPlace(t, name, held, ids, off)
			}
		}
	}
}

// consecutive reports whether ids are off..off+len(ids)-1 and are a
// prefix (off 0) or one item: the steps the device runs in place.
func consecutive(ids []int) (off int, ok bool) {
	if len(ids) == 1 {
		return ids[0], true
	}
	return 0, slices.Equal(ids, spec.Iota(len(ids)))
}

// sameInPlace fails unless the per-step int32 tensors of the step of held
// items off..off+len(ids)-1 are where inPlace says the device finds them:
// in the held kv_lens and cu_seqlens, and in widthTable of the step's
// max_pages.
func sameInPlace(t *testing.T, name string, held KernelArgs, ids []int, off int) {
	t.Helper()
	st, err := held.attnStep(ids)
	if err != nil {
		t.Fatal(err)
	}
	at := st.inPlace(off)
	if len(at) != len(st.ints) {
		t.Fatalf("%s: in place %v, per-step tensors %d", name, at, len(st.ints))
	}
	for k, want := range st.ints {
		src := held.Tensors[k].Ints
		if k == "block_table" {
			src = held.widthTable(int(st.sizes["max_pages"]))
		}
		if i := at[k]; i+len(want) > len(src) || !slices.Equal(src[i:i+len(want)], want) {
			t.Errorf("%s: %s in place from entry %d of %v, want %v", name, k, i, src, want)
		}
	}
}

// sameStepInputs fails unless step inputs got are want (KernelInputs of
// the gathered batch) as TestHeldAttnInputs says, held the held inputs.
func sameStepInputs(t *testing.T, name string, got, want, held KernelArgs) {
	t.Helper()
	for k, v := range want.Sizes {
		w := v
		if k == "pages" { // the shared cache: the held one's pages
			w = held.Sizes[k]
		}
		if got.Sizes[k] != w {
			t.Errorf("%s: size %s = %d, want %d", name, k, got.Sizes[k], w)
		}
	}
	if len(got.Sizes) != len(want.Sizes) {
		t.Errorf("%s: sizes %v, want %v", name, got.Sizes, want.Sizes)
	}
	if got.Scale != want.Scale || got.Causal != want.Causal || got.rowsKey != want.rowsKey || !slices.Equal(got.perRow, want.perRow) {
		t.Errorf("%s: scale %v causal %d rows %q per row %v, want %v %d %q %v", name,
			got.Scale, got.Causal, got.rowsKey, got.perRow, want.Scale, want.Causal, want.rowsKey, want.perRow)
	}
	if len(got.Tensors) != len(want.Tensors) {
		t.Errorf("%s: %d tensors, want %d", name, len(got.Tensors), len(want.Tensors))
	}
	for k, w := range want.Tensors {
		if k == "k_cache" || k == "v_cache" || k == "block_table" {
			continue // placed otherwise: compared token by token below
		}
		if g := got.Tensors[k]; !slices.Equal(g.Ints, w.Ints) || !equalBits(g.Vals, w.Vals) {
			t.Errorf("%s: tensor %s differs from the gathered batch's", name, k)
		}
	}
	if _, ok := want.Tensors["block_table"]; ok {
		samePagedTokens(t, name, got, want)
	}
}

// equalBits reports whether a and b hold the same float32 bits.
func equalBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// samePagedTokens fails unless every request of decode inputs got reads
// through its block table the K and V tokens want's reads through its
// own, its slots past kv_len are NaN, its entries past its pages -1, and
// every page it names is one of got's pages.
func samePagedTokens(t *testing.T, name string, got, want KernelArgs) {
	t.Helper()
	z := want.Sizes
	ps, width, mp := int(z["page_size"]), int(z["kv_heads"]*z["head_dim"]), int(z["max_pages"])
	gt, wt := got.Tensors["block_table"].Ints, want.Tensors["block_table"].Ints
	if len(gt) != len(wt) {
		t.Fatalf("%s: block table of %d entries, want %d", name, len(gt), len(wt))
	}
	for r, L := range want.Tensors["kv_lens"].Ints {
		row := gt[r*mp : (r+1)*mp]
		for j, p := range row {
			if (j*ps < L) != (p >= 0) || p >= int(got.Sizes["pages"]) {
				t.Fatalf("%s: request %d: block table entry %d is %d (%d tokens in pages of %d, %d pages)", name, r, j, p, L, ps, got.Sizes["pages"])
			}
		}
		for slot := 0; slot < (L+ps-1)/ps*ps; slot++ {
			g := (row[slot/ps]*ps + slot%ps) * width
			w := (wt[r*mp+slot/ps]*ps + slot%ps) * width
			for _, c := range []string{"k_cache", "v_cache"} {
				gv, wv := got.Tensors[c].Vals[g:g+width], want.Tensors[c].Vals[w:w+width]
				if !equalBits(gv, wv) || (slot >= L) != math.IsNaN(float64(gv[0])) {
					t.Fatalf("%s: request %d token %d: %s %v, the gathered batch's %v", name, r, slot, c, gv, wv)
				}
			}
		}
	}
}

// TestHeldAttnInputsErrors: a step of no items, an item past the held
// batch, and a batch that is not attention are errors naming them.
func TestHeldAttnInputsErrors(t *testing.T) {
	c := spec.Case{Version: spec.CaseVersion, Op: spec.OpAttnDecode, Relation: spec.RelOracleParity,
		Shape: spec.Shape{Rows: 2, KV: 4, Heads: 2, KVHeads: 1, HeadDim: 2},
		In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 1, GenVersion: spec.GeneratorVersion}
	_, a := kernelInputsOf(t, c)
	for _, ids := range [][]int{nil, {2}, {-1}} {
		if _, err := HeldAttnInputs(a, ids); err == nil {
			t.Errorf("items %v: no error", ids)
		}
	}
	r, err := KernelInputs(&target.Batch{Op: spec.OpRMSNorm, In: oracle.BF16, Out: oracle.BF16,
		Input: &oracle.RMSNormInput{Rows: 1, Hidden: 1, X: []float32{1}, W: []float32{1}}}, 132)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := HeldAttnInputs(r, []int{0}); err == nil {
		t.Error("an rmsnorm batch: no error")
	}
}

// TestKernelArgsItems: the size a held batch counts its items by is the
// batch's item count for every op a user kernel implements (HoldUserKernel
// holds a batch only when they agree): rows, m, requests, sequences.
func TestKernelArgsItems(t *testing.T) {
	for _, b := range []*target.Batch{
		{Op: spec.OpRMSNorm, In: oracle.BF16, Out: oracle.BF16, Input: &oracle.RMSNormInput{Rows: 2, Hidden: 1, X: []float32{1, 2}, W: []float32{1}}},
		{Op: spec.OpGEMM, In: oracle.BF16, Out: oracle.BF16, Input: &oracle.GEMMInput{M: 3, K: 1, N: 1, X: []float32{1, 2, 3}, W: []float32{1}}},
		{Op: spec.OpLogProb, In: oracle.BF16, Input: &oracle.LogProbInput{Rows: 2, Vocab: 2, Logits: []float32{1, 2, 3, 4}, Targets: []int32{0, 1}}},
	} {
		a, err := KernelInputs(b, 132)
		if err != nil {
			t.Fatal(err)
		}
		if a.items() != b.Items() {
			t.Errorf("%s: %d items in the inputs, %d in the batch", b.Op, a.items(), b.Items())
		}
	}
	for _, c := range []spec.Case{
		{Version: spec.CaseVersion, Op: spec.OpAttnDecode, Relation: spec.RelOracleParity,
			Shape: spec.Shape{Rows: 3, KV: 4, Heads: 2, KVHeads: 1, HeadDim: 2},
			In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 1, GenVersion: spec.GeneratorVersion},
		{Version: spec.CaseVersion, Op: spec.OpAttnPrefill, Relation: spec.RelOracleParity,
			Shape: spec.Shape{Seqs: 3, SeqLen: 4, Heads: 2, KVHeads: 1, HeadDim: 2},
			In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 1, GenVersion: spec.GeneratorVersion},
	} {
		b, a := kernelInputsOf(t, c)
		if a.items() != b.Items() || a.items() != 3 {
			t.Errorf("%s: %d items in the inputs, %d in the batch", c.Op, a.items(), b.Items())
		}
	}
}
