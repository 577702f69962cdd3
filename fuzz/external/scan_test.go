package external

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
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
	if os.Getenv("BITPARITY_TEST_TORCH") != "1" {
		t.Skip("set BITPARITY_TEST_TORCH=1 to test adapters/torch_ops.py (needs torch)")
	}
	py := python(t)
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skipf("%s has no torch", py)
	}
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
	b, err := fuzz.Inputs(testCase(op, spec.BF16, spec.BF16, spec.DistNormal, 5))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := tg.Hold(ctx, b); err != nil {
		t.Fatal(err)
	}
	ids := []int{b.Items() - 1, 0}
	if b.Items() > 2 {
		ids = append(ids, 2)
	}
	g, err := fuzz.Gather(b, ids)
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
		first := make([]int, n)
		for i := range first {
			first[i] = i
		}
		one, err := tg.Step(ctx, first, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pre[k].Digests, one.Digests) || !slices.Equal(pre[k].TapDigests, one.TapDigests) {
			t.Fatalf("prefix of %d items: digests of the prefix frame differ from a step of it", n)
		}
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
