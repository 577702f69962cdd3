package external

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/moeroute"
	"github.com/bitparity/bitparity/ops/moerouter"
	"github.com/bitparity/bitparity/ops/quantfp8"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestOpRowDigest: an op's row digests the words of its columns in order,
// 32 bits an int32 or fp32 element and 8 a uint8 one.
func TestOpRowDigest(t *testing.T) {
	cols := []ops.Column{{Name: "ids", Elem: ops.Int32, Width: 2}, {Name: "q", Elem: ops.Uint8, Width: 3}, {Name: "s", Elem: ops.FP32, Width: 1}}
	o := ops.NewOutput(cols, 2)
	o.PutInt32(0, 1, 0, -1)
	o.PutInt32(0, 1, 1, 7)
	copy(o.Row(1, 1), []byte{0x80, 0, 0xff})
	o.PutFP32(2, 1, 0, 1)
	if got, want := OpRowDigest(o, 1), RowDigest([]uint32{0xffffffff, 7, 0x80, 0, 0xff, 0x3f800000}); got != want {
		t.Errorf("digest %016x, want %016x", got, want)
	}
	if got, want := OpRowDigest(o, 0), RowDigest(make([]uint32, 6)); got != want {
		t.Errorf("zero row: digest %016x, want %016x", got, want)
	}
}

// TestOpScanFrames: the NumPy adapter's op-package ops hold a batch and
// answer steps (opScanFrames).
func TestOpScanFrames(t *testing.T) {
	for _, tt := range opScanCases() {
		t.Run(tt.args[0]+"-"+tt.args[len(tt.args)-1], func(t *testing.T) {
			ot := opTarget(t, adapterCmd(t, "adapters/numpy_ops.py", tt.args...), "exec:test-opscan-"+strings.Join(tt.args, "_"))
			opScanFrames(t, ot.(*OpTarget), tt.op, tt.shape)
		})
	}
}

// TestTorchOpScanFrames is TestOpScanFrames for adapters/torch_ops.py's
// moe_route on the CPU, with BITPARITY_TEST_TORCH=1.
func TestTorchOpScanFrames(t *testing.T) {
	torchPython(t)
	ot := opTarget(t, adapterCmd(t, "adapters/torch_ops.py", "moe_route", "--device", "cpu"), "exec:test-torch-opscan")
	opScanFrames(t, ot.(*OpTarget), moeroute.Op{}, ops.Shape{"experts": 16, "top_k": 4})
}

type opScanCase struct {
	args  []string
	op    ops.Op
	shape ops.Shape
}

func opScanCases() []opScanCase {
	return []opScanCase{
		{[]string{"moe_route"}, moeroute.Op{}, ops.Shape{"experts": 16, "top_k": 4}},
		{[]string{"moe_router"}, moerouter.Op{}, ops.Shape{"hidden": 24, "experts": 8, "top_k": 2}},
		{[]string{"quant_fp8"}, quantfp8.Op{}, ops.Shape{"hidden": 40}},
		{[]string{"quant_fp8", "--fp8-scaling", "per_tensor"}, quantfp8.Op{}, ops.Shape{"hidden": 40}},
	}
}

// opScanFrames holds a batch of 7 items of op at shape s in ot's adapter
// and checks its steps against requests (Run) of the same batches: the
// items each alone, a gathered batch with every row fetched (the rows
// Run's, bit for bit, and each digesting to its digest), prefixes
// asked together, and prefixes and gathers in one frame; the steps after
// the items alone are compared with them on the adapter's side.
func opScanFrames(t *testing.T, ot *OpTarget, op ops.Op, s ops.Shape) {
	t.Helper()
	if !ot.Holds() || !ot.comparesAlone() {
		t.Fatalf("the kit's adapter holds no op scan compared with the items alone: hello %v", ot.Process().Hello())
	}
	ctx := context.Background()
	in, err := op.Seeded(ops.Draw{Shape: s, DType: oracle.BF16, Dist: "normal", Seed: 5}, []uint64{0, 1, 2, 3, 4, 5, 6})
	if err != nil {
		t.Fatal(err)
	}
	if err := ot.Hold(ctx, in); err != nil {
		t.Fatal(err)
	}
	digestsOf := func(ids []int) []uint64 {
		t.Helper()
		b, err := in.Gather(ids)
		if err != nil {
			t.Fatal(err)
		}
		o, err := ot.Run(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		d := make([]uint64, o.Rows)
		for r := range d {
			d[r] = OpRowDigest(o, r)
		}
		return d
	}
	all := spec.Iota(in.Items())
	each, err := ot.Step(ctx, [][]int{all}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := ops.Alone(ctx, ot, in)
	if err != nil {
		t.Fatal(err)
	}
	for r := range all {
		if each[0].Digests[r] != OpRowDigest(alone, r) {
			t.Fatalf("item %d alone: digest %016x, Run's %016x", r, each[0].Digests[r], OpRowDigest(alone, r))
		}
	}
	against := ot.Process().StepsAgainstAlone()
	ids := []int{6, 0, 2, 2}
	g, err := ot.Step(ctx, [][]int{ids}, false, spec.Iota(len(ids)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := in.Gather(ids)
	want, err := ot.Run(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for r := range ids {
		if !g[0].Fetched.SameRow(r, want, r) || g[0].Digests[r] != OpRowDigest(want, r) {
			t.Fatalf("gathered batch %v: row %d differs from Run's", ids, r)
		}
	}
	batches := [][]int{{0}, {0, 1, 2}, all}
	pre, err := ot.Step(ctx, batches, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	mixed := [][]int{{0, 1}, {3, 4, 5}, {1}, {5, 6, 0}}
	mix, err := ot.Step(ctx, mixed, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, st := range append(pre, mix...) {
		ids := append(batches, mixed...)[k]
		if w := digestsOf(ids); !slices.Equal(st.Digests, w) {
			t.Errorf("batch %v: digests %x, Run's %x", ids, st.Digests, w)
		}
	}
	if got, want := ot.Process().StepsAgainstAlone()-against, 1+len(batches)+len(mixed); got != want {
		t.Errorf("%d step batches compared with the items alone, want %d", got, want)
	}
}

// TestOpScanLies: a step reply whose digest is not its row's, or whose
// fetched row is not the one digested, is refused as a crash naming the
// reply frame, the tensors and both digests.
func TestOpScanLies(t *testing.T) {
	in, err := quantfp8.Op{}.Seeded(ops.Draw{Shape: ops.Shape{"hidden": 16}, DType: oracle.FP32, Dist: "normal", Seed: 1}, []uint64{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"digest", "row"} {
		ot := opTarget(t, adapterCmd(t, "fuzz/external/testdata/opliar.py", mode), "exec:test-opliar-"+mode).(*OpTarget)
		ctx := context.Background()
		if err := ot.Hold(ctx, in); err != nil {
			t.Fatal(err)
		}
		_, err := ot.Step(ctx, [][]int{{0, 1, 2}}, false, []int{0})
		want := `reply frame 2: tensors "q", "scale": row 0 digests to `
		if err == nil || !errors.Is(err, target.ErrTargetCrashed) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want a crash saying %q", mode, err, want)
		}
	}
}
