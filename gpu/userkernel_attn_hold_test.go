//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// attnHeldCases are, for each example attention kernel, batches to hold:
// decode requests of mixed KV lengths in pages of several sizes, prefill
// sequences whole and in a chunk; 8 heads, so the SM-rule kernel splits
// 4 ways below 17 requests on an H200 and one way from there.
func attnHeldCases(op spec.Op) []*target.Batch {
	var bs []*target.Batch
	if op == spec.OpAttnDecode {
		lens := []int{130, 1, 64, 65, 17, 200, 300, 33}
		var kvs []int
		for i := range 24 {
			kvs = append(kvs, lens[i%len(lens)])
		}
		c := spec.Case{Version: spec.CaseVersion, Op: op, Relation: spec.RelOracleParity,
			Shape: spec.Shape{Rows: len(kvs), KV: kvs[0], KVLens: kvs, Heads: 8, KVHeads: 2, HeadDim: 16},
			In:    spec.BF16, Out: spec.FP32, Dist: spec.DistNormal, Seed: 9, GenVersion: spec.GeneratorVersion}
		for _, ps := range []int{0, 1, 5, 64} {
			b, _ := inputs.Of(c)
			b.Layout.PageSize = ps
			bs = append(bs, b)
		}
		return bs
	}
	c := spec.Case{Version: spec.CaseVersion, Op: op, Relation: spec.RelOracleParity,
		Shape: spec.Shape{Seqs: 6, SeqLen: 70, Heads: 4, KVHeads: 2, HeadDim: 16},
		In:    spec.BF16, Out: spec.FP32, Dist: spec.DistNormal, Seed: 9, GenVersion: spec.GeneratorVersion}
	for _, from := range []int{0, 16, 33} {
		b, _ := inputs.Of(c)
		b.Layout.ChunkFrom = from
		bs = append(bs, b)
	}
	return bs
}

// outBits is o's values and taps on the host, released.
func outBits(t *testing.T, o *target.Output, err error) (vals, taps []uint32) {
	t.Helper()
	if err == nil {
		err = o.ToHost()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer o.Release()
	for _, v := range o.Values {
		vals = append(vals, math.Float32bits(v))
	}
	for _, v := range o.Taps {
		taps = append(taps, math.Float32bits(v))
	}
	return vals, taps
}

// heldRuns is a held attention batch: AttnHeld, UserHeld.
type heldRuns interface {
	Run(ctx context.Context, ids []int) (*target.Output, error)
	Alone(ctx context.Context, n int) (*target.Output, error)
}

// checkHeldRuns fails unless h, what's held batch of n items, gives for
// prefixes, gathers out of order with a repeat, the last three items
// (n >= 4) and the items alone the
// bits of values and taps (tap, taps: their word in a message) that want
// gives for the same items (Run on the gathered batch uploaded whole); a
// run of h must have taps.
func checkHeldRuns(t *testing.T, what, tap, taps string, h heldRuns, n int, want func(ids []int) (vals, taps []uint32)) {
	t.Helper()
	ctx := context.Background()
	for _, ids := range [][]int{spec.Iota(1), spec.Iota(3), spec.Iota(n), {n - 1, 0, 2, 2}, {n - 3, n - 2, n - 1}} {
		o, err := h.Run(ctx, ids)
		gv, gt := outBits(t, o, err)
		wv, wt := want(ids)
		if i, j := firstOther(gv, wv), firstOther(gt, wt); i >= 0 || j >= 0 || len(gt) == 0 {
			t.Fatalf("%s, items %v: held differs from Run at value %d, %s %d (%d %s)", what, ids, i, tap, j, len(gt), taps)
		}
	}
	o, err := h.Alone(ctx, n)
	av, at := outBits(t, o, err)
	var wv, wt []uint32
	for i := range n {
		v, tp := want([]int{i})
		wv, wt = append(wv, v...), append(wt, tp...)
	}
	if i, j := firstOther(av, wv), firstOther(at, wt); i >= 0 || j >= 0 {
		t.Fatalf("%s: items alone differ from Run at value %d, %s %d", what, i, tap, j)
	}
}

// firstOther is the first index where a and b differ, or -1.
func firstOther(a, b []uint32) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestUserHeldAttention: a held attention batch of each example kernel
// (its layout kept: decode pages of 1, 5, 16 and 64 tokens, prefill chunks
// from 0, 16 and 33) gives, for prefixes, gathers out of order with a
// repeat and the items alone, the bits of values and lse that Run gives on
// the gathered batch uploaded whole; and its bulk check of prefixes flags
// exactly the prefixes whose Run has rows (or lse) differing from the same
// rows alone, each with its count.
func TestUserHeldAttention(t *testing.T) {
	ctx := context.Background()
	bits := func(o *target.Output, err error) ([]uint32, []uint32) {
		t.Helper()
		return outBits(t, o, err)
	}
	for _, name := range []string{"attn_decode_fixed", "attn_decode_sm", "attn_prefill_fixed", "attn_prefill_maxseqlen", "attn_prefill_prefix"} {
		k, err := NewUserKernel(exampleManifest(t, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range attnHeldCases(k.Info().Op) {
			what := fmt.Sprintf("%s, layout %+v", name, b.Layout)
			h, err := HoldUserKernel(k, b)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			n := b.Items()
			want := func(ids []int) ([]uint32, []uint32) {
				g, err := inputs.Gather(b, ids)
				if err != nil {
					t.Fatal(err)
				}
				g.Layout = b.Layout
				return bits(k.Run(ctx, g, nil))
			}
			checkHeldRuns(t, what, "lse", "lse", h, n, want)
			flagged := checkHeldPrefixes(t, what, h, n, b.RowsPerItem())
			if drifts := name == "attn_decode_sm"; drifts != (len(flagged) > 0) {
				t.Errorf("%s: prefixes differing from their items alone: %v (the kernel drifts: %v)", what, flagged, drifts)
			}
			h.Release()
		}
	}
}

// checkHeldPrefixes fails unless h's bulk check of prefixes 1..n (with
// taps) flags the prefixes whose Run differs from the items alone in
// some row's values or lse, with the count of such rows, and returns
// them.
func checkHeldPrefixes(t *testing.T, what string, h *UserHeld, n, rowsPerItem int) map[int]int {
	t.Helper()
	ctx := context.Background()
	alone, err := h.Alone(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Release()
	if err := alone.ToHost(); err != nil {
		t.Fatal(err)
	}
	want := map[int]int{}
	for v := 1; v <= n; v++ {
		o, err := h.Run(ctx, spec.Iota(v))
		if err == nil {
			err = o.ToHost()
		}
		if err != nil {
			t.Fatal(err)
		}
		for r := range v * rowsPerItem {
			differs := math.Float32bits(o.Taps[r]) != math.Float32bits(alone.Taps[r])
			for j := r * o.Cols; j < (r+1)*o.Cols; j++ {
				differs = differs || math.Float32bits(o.Values[j]) != math.Float32bits(alone.Values[j])
			}
			if differs {
				want[v]++
			}
		}
		o.Release()
	}
	diffs, err := h.CheckPrefixes(ctx, PrefixCheck{Items: spec.Iota(n + 1)[1:], Alone: alone, Taps: true})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	got := map[int]int{}
	for _, d := range diffs {
		got[d.Items] = len(d.Alone)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: the bulk check flagged %v, the runs differ at %v", what, got, want)
	}
	return want
}
