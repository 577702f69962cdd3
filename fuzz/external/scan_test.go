package external

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestRowDigest: the digest's formula on a small row, and one word's
// change always changes it.
func TestRowDigest(t *testing.T) {
	m := uint64(DigestMul)
	if got, want := RowDigest([]uint32{5, 0}), 6*m+1*m*m; got != want {
		t.Fatalf("RowDigest([5 0]) = %x, want %x", got, want)
	}
	if RowDigest(nil) != 0 {
		t.Fatal("the digest of an empty row is not 0")
	}
	row := []uint32{0x3f80, 0xbf80, 0, 0x8000, 0x7fc0}
	d := RowDigest(row)
	for j := range row {
		for _, flip := range []uint32{1, 0x8000, 0xffff} {
			r := slices.Clone(row)
			r[j] ^= flip
			if RowDigest(r) == d {
				t.Errorf("word %d ^ %#x keeps the digest", j, flip)
			}
		}
	}
}

// TestScanFrames: for every op, a step on held items answers the digests
// of the rows that Run gives for the gathered batch (checked by Go's
// RowDigest on the fetched rows, which must equal Run's bits), and a step
// of items each alone answers each item's own batch.
func TestScanFrames(t *testing.T) {
	for _, op := range spec.Ops {
		t.Run(string(op), func(t *testing.T) { checkScanFrames(t, numpyTarget(t, op)) })
	}
}

// TestTorchScanFrames is TestScanFrames for adapters/torch_ops.py (torch
// arrays held on the device, digests computed there), with
// BITPARITY_TEST_TORCH=1.
func TestTorchScanFrames(t *testing.T) {
	torchPython(t)
	for _, op := range spec.Ops {
		t.Run(string(op), func(t *testing.T) {
			tg, err := New(adapterCmd(t, "adapters/torch_ops.py", string(op)), op, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			checkScanFrames(t, tg)
		})
	}
}

// checkScanFrames holds a small batch of tg's op and checks a gathered
// step and a step of items alone against Run.
func checkScanFrames(t *testing.T, tg *Target) {
	t.Helper()
	op := tg.Info().Op
	if !tg.Scans() {
		t.Fatalf("the kit's adapter does not declare scan=%d: hello %v", ScanVersion, tg.Hello())
	}
	b, err := inputs.Of(testCase(op, spec.BF16, spec.BF16, spec.DistNormal, 5))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := tg.Hold(ctx, b); err != nil {
		t.Fatal(err)
	}
	// every item alone first: the steps below are compared with them on
	// the adapter's side, and their fetched rows check the digests Step
	// fills in from the items alone.
	if _, err := tg.Step(ctx, spec.Iota(b.Items()), true, nil); err != nil {
		t.Fatal(err)
	}
	against := tg.StepsAgainstAlone()
	ids := []int{b.Items() - 1, 0}
	if b.Items() > 2 {
		ids = append(ids, 2)
	}
	g, err := inputs.Gather(b, ids)
	if err != nil {
		t.Fatal(err)
	}
	want, err := tg.Run(ctx, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, g.Rows())
	for i := range all {
		all[i] = i
	}
	st, err := tg.Step(ctx, ids, false, all)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, first := diff(b.OutDType(), want, &target.Output{Rows: all, Cols: st.Cols, DType: b.OutDType(), Values: st.Values}); n != 0 {
		t.Fatalf("step rows differ from Run's on the gathered batch: %d values, first %s", n, first)
	}
	sizes := []int{1, b.Items()}
	pre, err := tg.StepPrefixes(ctx, sizes)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range sizes {
		one, err := tg.Step(ctx, spec.Iota(n), false, spec.Iota(n*b.RowsPerItem()))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pre[k].Digests, one.Digests) || !slices.Equal(pre[k].TapDigests, one.TapDigests) {
			t.Fatalf("prefix of %d items: digests of the prefix frame differ from a step of it", n)
		}
	}
	if got, want := tg.StepsAgainstAlone()-against, 1+len(sizes)+len(sizes); tg.ComparesAlone() && got != want {
		t.Errorf("%d steps compared with the items alone, want %d", got, want)
	}
	each, err := tg.Step(ctx, ids, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	kr := b.RowsPerItem()
	for i, id := range ids {
		one, err := tg.Step(ctx, []int{id}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(one.Digests, each.Digests[i*kr:(i+1)*kr]) {
			t.Fatalf("item %d alone: digests of the each-step differ from a step of the item", id)
		}
	}
}

// TestDecodeAgainst: a reply to a step compared with the items alone
// fills the rows it does not name from the items alone (in the order of
// the step's items, prefix or gather) and the named rows from its
// digests; replies that break the layout are refused, naming the field.
func TestDecodeAgainst(t *testing.T) {
	const kr = 2
	// items 0..3 ran alone in the order 2, 0, 1, 3: item i's rows are
	// digests 10*i, 10*i+1 (taps: +100).
	ids := []int{2, 0, 1, 3}
	st0 := &Step{Rows: 8, TapCols: 1}
	for _, id := range ids {
		for r := range kr {
			st0.Digests = append(st0.Digests, uint64(10*id+r))
			st0.TapDigests = append(st0.TapDigests, uint64(10*id+r+100))
		}
	}
	h := &heldBatch{items: 5, kr: kr}
	alone := newAloneRows(h, ids, st0)
	if alone.ident || !alone.covers([]int{3, 0}) || alone.covers([]int{4}) {
		t.Fatalf("aloneRows %+v: want not in order, covering 0..3 only", alone)
	}
	digests := func(ds ...uint64) tensor {
		return tensor{name: "digests", dtype: wireI64, shape: []int{len(ds) / 2, 2}, data: encodeUint64s(ds)}
	}
	differ := func(rows ...int) tensor {
		return tensor{name: "differ", dtype: wireI64, shape: []int{len(rows)}, data: encodeInt64s(nil, rows)}
	}
	reply := func(tapCols string, ts ...tensor) *frame {
		return &frame{meta: map[string]string{"frame": "reply", "seq": "1", "tap_cols": tapCols}, tensors: ts}
	}
	tests := []struct {
		name    string
		batches [][]int
		rep     *frame
		want    []uint64 // digests, then tap digests
		err     string
	}{
		{"gather, one row named", [][]int{{3, 0}}, reply("1", differ(2), digests(7, 8)),
			[]uint64{30, 31, 7, 1, 130, 131, 8, 101}, ""},
		{"prefixes, none named", [][]int{{0}, {0, 1}}, reply("1", differ(), digests()),
			[]uint64{0, 1, 0, 1, 10, 11, 100, 101, 100, 101, 110, 111}, ""},
		{"taps of another width, every row named", [][]int{{1}}, reply("2", differ(0, 1), digests(1, 2, 3, 4)),
			[]uint64{1, 3, 2, 4}, ""},
		{"taps of another width, a row unnamed", [][]int{{1}}, reply("2", differ(0), digests(1, 2)), nil,
			`tensor "differ": 1 rows of 2 named, but the taps are 2 wide and 1 alone`},
		{"rows not ascending", [][]int{{0, 1}}, reply("1", differ(2, 1), digests(1, 2, 3, 4)), nil,
			`tensor "differ": row 1 after row 2`},
		{"row past the step", [][]int{{0}}, reply("1", differ(2), digests(1, 2)), nil,
			`tensor "differ": row 2 outside the step's 2 rows`},
		{"digests of another count", [][]int{{0}}, reply("1", differ(0), digests(1, 2, 3, 4)), nil,
			`tensor "digests": I64 [1 2] expected`},
		{"no differ", [][]int{{0}}, reply("1", digests()), nil, `tensor "differ": missing`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var steps []*Step
			for _, b := range tc.batches {
				steps = append(steps, &Step{Rows: len(b) * kr, Cols: 4})
			}
			err := decodeStep(tc.rep, steps, h, nil, 1, "reply frame 1", alone, tc.batches)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got, taps []uint64
			for _, st := range steps {
				got = append(got, st.Digests...)
				taps = append(taps, st.TapDigests...)
			}
			if got = append(got, taps...); !slices.Equal(got, tc.want) {
				t.Fatalf("digests %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDecodeAgainstShares: when the items alone ran in order, a prefix
// with no row named shares their digests, and a named row never writes
// them.
func TestDecodeAgainstShares(t *testing.T) {
	h := &heldBatch{items: 3, kr: 1}
	alone := newAloneRows(h, []int{0, 1, 2}, &Step{Rows: 3, Digests: []uint64{10, 11, 12}})
	steps := []*Step{{Rows: 2}, {Rows: 3}}
	rep := &frame{meta: map[string]string{"frame": "reply", "seq": "1", "tap_cols": "0"}, tensors: []tensor{
		{name: "differ", dtype: wireI64, shape: []int{1}, data: encodeInt64s(nil, []int{3})},
		{name: "digests", dtype: wireI64, shape: []int{1, 2}, data: encodeUint64s([]uint64{99, 0})}}}
	if err := decodeStep(rep, steps, h, nil, 1, "reply frame 1", alone, [][]int{{0, 1}, {0, 1, 2}}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(steps[0].Digests, []uint64{10, 11}) || &steps[0].Digests[0] != &alone.digests[0] {
		t.Errorf("prefix of 2, none named: digests %v, want the items alone's own [10 11]", steps[0].Digests)
	}
	if !slices.Equal(steps[1].Digests, []uint64{10, 99, 12}) || !slices.Equal(alone.digests, []uint64{10, 11, 12}) {
		t.Errorf("prefix of 3, row 1 named: digests %v (want [10 99 12]), items alone now %v", steps[1].Digests, alone.digests)
	}
}

func encodeUint64s(xs []uint64) []byte {
	b := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return b
}
