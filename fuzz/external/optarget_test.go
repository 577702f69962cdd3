package external

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/ops/moeroute"
	"github.com/bitparity/bitparity/ops/quantfp8"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// opTarget starts cmdline, an adapter of an op package's op, registered
// under name, and returns its ops.Target (closed when the test ends).
func opTarget(t *testing.T, cmdline, name string) ops.Target {
	t.Helper()
	et, err := Add(cmdline, "", Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { et.Close() })
	ot, ok := all.Lookup(name)
	if !ok {
		t.Fatalf("%s: not registered with the op packages' targets", name)
	}
	return ot
}

// edgeRows are rows of width cols of dtype dt that hold what draws rarely
// do: zeros of both signs, NaNs, infinities, equal values, values past
// fp8's largest and fp32 subnormals, then rows on fp8's rounding ties and rows of sines.
func edgeRows(cols int, dt oracle.DType) []float32 {
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		1, 1, -1, 448, 449, 464, 57344, 61440, 1e-40, -1e-45, 3e38, -3e38, 0.5, 0.5, 0.5}
	var v []float32
	for r := range len(special) {
		for c := range cols {
			x := special[(r+c*7)%len(special)]
			if r%5 == 4 {
				x = special[r] // a row of one value: every expert tied
			}
			v = append(v, oracle.Round(dt, x))
		}
	}
	// rows whose amax is fp8's largest (scale 1 at per-token scaling):
	// their values sit on e4m3's and e5m2's rounding ties
	for _, top := range []float32{448, 57344} {
		ties := []float32{top, 17, 19, 4.25, 4.75, -17, 0.0029296875, 2.25, 4.5, -4.5, 0.5, 11}
		for c := range cols {
			v = append(v, oracle.Round(dt, ties[c%len(ties)]))
		}
	}
	for i := range 48 * cols {
		v = append(v, oracle.Round(dt, float32(math.Sin(float64(i)*1.7))*float32(i%9+1)))
	}
	return v
}

// TestOpExecOracleBits: the NumPy adapter's moe_route (both tie-breaks)
// and quant_fp8 (both scalings and formats) give the oracle's bits on
// rows of zeros, NaNs, infinities, ties, saturating and subnormal values,
// fp32 and bf16, through the process protocol (OpTarget.Run against
// Op.Reference of the declared policy).
func TestOpExecOracleBits(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		op    ops.Op
		shape ops.Shape
		cols  int
	}{
		{[]string{"moe_route"}, moeroute.Op{}, ops.Shape{"experts": 8, "top_k": 3}, 8},
		{[]string{"moe_route", "--moe-tie", "highest"}, moeroute.Op{}, ops.Shape{"experts": 8, "top_k": 8}, 8},
		{[]string{"quant_fp8"}, quantfp8.Op{}, ops.Shape{"hidden": 24}, 24},
		{[]string{"quant_fp8", "--fp8-format", "e5m2"}, quantfp8.Op{}, ops.Shape{"hidden": 24}, 24},
		{[]string{"quant_fp8", "--fp8-scaling", "per_tensor", "--fp8-format", "e5m2"}, quantfp8.Op{}, ops.Shape{"hidden": 24}, 24},
	} {
		what := strings.Join(tt.args, " ")
		ot := opTarget(t, adapterCmd(t, "adapters/numpy_ops.py", tt.args...), "exec:test-bits-"+strings.ReplaceAll(what, " ", "_"))
		for _, dt := range []oracle.DType{oracle.FP32, oracle.BF16} {
			in, err := tt.op.Explicit(tt.shape, dt, edgeRows(tt.cols, dt))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ot.Run(context.Background(), in)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			want, err := tt.op.Reference(in, ot.Declared())
			if err != nil {
				t.Fatal(err)
			}
			if err := got.SameColumns(want); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			var rows []int
			for r := range want.Rows {
				if !got.SameRow(r, want, r) {
					rows = append(rows, r)
				}
			}
			if len(rows) > 0 {
				t.Errorf("%s %s: %d of %d rows differ from the oracle (%s): %s", what, dt, len(rows), want.Rows, ot.Declared(),
					tt.op.Words(in, want, got, rows))
			}
		}
	}
}

// TestOpExecBadReply: a reply whose expert ids are F32, miss a column or
// whose weights are missing is a crash naming the tensor and what was
// expected; a good one runs.
func TestOpExecBadReply(t *testing.T) {
	in, err := moeroute.Op{}.Explicit(ops.Shape{"experts": 4, "top_k": 2}, oracle.FP32, []float32{1, 2, 3, 4, 4, 3, 2, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ mode, want string }{
		{"dtype", `reply frame 1: tensor "expert_ids": dtype I32 expected (int32), got F32`},
		{"shape", `reply frame 1: tensor "expert_ids": shape [2 2] expected (2 rows of 2), got [2 1]`},
		{"missing", `reply frame 1: tensor "weights": missing (the column weights: 2 fp32 a row)`},
		{"good", ""},
	} {
		ot := opTarget(t, adapterCmd(t, "fuzz/external/testdata/badroute.py", tt.mode), "exec:test-badroute-"+tt.mode)
		_, err := ot.Run(context.Background(), in)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.mode, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, target.ErrTargetCrashed) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want a crash saying %q", tt.mode, err, tt.want)
		}
	}
}

// TestOpExecHello: an adapter of an op package's op that declares a
// policy the op does not read, or an ulp bound (its outputs are compared
// bitwise), fails the handshake naming the field.
func TestOpExecHello(t *testing.T) {
	for _, tt := range []struct{ mode, want string }{
		{"policy", `hello frame 0: field "schedule": moe_route policy "tie=random": unknown "tie=random"`},
		{"ulp", `hello frame 0: field "ulp_bound": 2: op moe_route is compared bitwise`},
	} {
		et, err := Add(adapterCmd(t, "fuzz/external/testdata/badroute.py", tt.mode), "", Options{Name: "exec:test-hello-" + tt.mode})
		if err == nil {
			et.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one saying %q", tt.mode, err, tt.want)
		}
	}
}

// TestTorchMoERoute: adapters/torch_ops.py's router through the process
// protocol (BITPARITY_TEST_TORCH=1 and a Python with torch, on the CPU):
// on the ties draw (logits of a few values, many equal) it picks the
// oracle's experts with each declared tie-break, and it is batch
// invariant over tokens 1..24 there; its weights are torch's softmax,
// logged against the oracle's, not asserted.
func TestTorchMoERoute(t *testing.T) {
	torchPython(t)
	s := ops.Shape{"experts": 16, "top_k": 4}
	for _, tie := range []string{"lowest", "highest"} {
		ot := opTarget(t, adapterCmd(t, "adapters/torch_ops.py", "moe_route", "--device", "cpu", "--moe-tie", tie), "exec:test-torch-route-"+tie)
		in, err := moeroute.Op{}.Seeded(ops.Draw{Shape: s, DType: oracle.FP32, Dist: "ties", Seed: 3}, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23})
		if err != nil {
			t.Fatal(err)
		}
		got, err := ot.Run(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := moeroute.Op{}.Reference(in, ot.Declared())
		if err != nil {
			t.Fatal(err)
		}
		weights := 0
		for r := range want.Rows {
			for j := range 4 {
				if got.Int32(moeroute.ColIDs, r, j) != want.Int32(moeroute.ColIDs, r, j) {
					t.Fatalf("tie=%s: token %d: experts %v, the oracle's %v", tie, r, got.Row(moeroute.ColIDs, r), want.Row(moeroute.ColIDs, r))
				}
				if got.FP32(moeroute.ColWeights, r, j) != want.FP32(moeroute.ColWeights, r, j) {
					weights++
				}
			}
		}
		t.Logf("tie=%s: every token's experts are the oracle's; %d of %d weights differ from the oracle's bits", tie, weights, 4*want.Rows)
		alone, err := ops.Alone(context.Background(), ot, in)
		if err != nil {
			t.Fatal(err)
		}
		for v := 1; v <= want.Rows; v++ {
			ch, err := ops.BatchInvariance(context.Background(), ot, in, alone, v)
			if err != nil {
				t.Fatal(err)
			}
			if len(ch.Rows) > 0 {
				t.Errorf("tie=%s: a batch of %d: %s", tie, v, moeroute.Op{}.Words(ch.Batch, ch.Want, ch.Got, ch.Rows))
			}
		}
	}
}
