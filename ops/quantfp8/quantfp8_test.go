package quantfp8

import (
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
)

// TestQuantize: the scale is amax / fmax (1 for a zero row) and each code
// the fp8 encoding of x / scale.
func TestQuantize(t *testing.T) {
	op := Op{}
	s := ops.Shape{DimHidden: 4}
	in, err := op.Explicit(s, oracle.FP32, []float32{
		896, -1, 0.5, 3, // amax 896: scale 2 (e4m3), codes of 448, -0.5, 0.25, 1.5
		0, 0, 0, 0, // amax 0: scale 1
	})
	if err != nil {
		t.Fatal(err)
	}
	o, err := op.Reference(in, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		row   int
		scale float32
		codes []uint8
	}{
		{0, 2, []uint8{0x7e, 0xb0, 0x28, 0x3c}},
		{1, 1, []uint8{0, 0, 0, 0}},
	} {
		if got := o.FP32(ColScale, tt.row, 0); got != tt.scale {
			t.Errorf("row %d: scale %g, want %g", tt.row, got, tt.scale)
		}
		if got := o.Row(ColQ, tt.row); string(got) != string(tt.codes) {
			t.Errorf("row %d: codes % x, want % x", tt.row, got, tt.codes)
		}
	}
	// per_tensor: one scale for the batch, from its amax 896
	o, _ = op.Reference(in, "scaling=per_tensor format=e4m3")
	if o.FP32(ColScale, 1, 0) != 2 {
		t.Errorf("per_tensor: row 1's scale %g, want the batch's 2", o.FP32(ColScale, 1, 0))
	}
	// e5m2: scale 896/57344 = 2^-6, 896/2^-6 = 57344 = 0x7b
	o, _ = op.Reference(in, "format=e5m2")
	if o.FP32(ColScale, 0, 0) != 1.0/64 || o.Row(ColQ, 0)[0] != 0x7b {
		t.Errorf("e5m2: scale %g, code %#x", o.FP32(ColScale, 0, 0), o.Row(ColQ, 0)[0])
	}
	if _, err := ParsePolicy("scaling=per_block"); err == nil {
		t.Error("scaling=per_block: no error")
	}
}

// TestNeighbourReplacement: per-tensor scaling changes a row when its
// neighbours' values change (the words say so); per-token does not.
func TestNeighbourReplacement(t *testing.T) {
	op := Op{}
	ctx := context.Background()
	d := ops.Draw{Shape: ops.Shape{DimHidden: 64}, DType: oracle.BF16, Dist: "outlier", Seed: 1}
	keys := func(base uint64) []uint64 {
		return []uint64{base, base + 1, base + 2, base + 3, base + 4, base + 5, base + 6, base + 7}
	}
	in, err := op.Seeded(d, keys(0))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := op.Seeded(d, keys(1<<40))
	for _, tg := range op.Targets() {
		one, err := ops.NeighbourReplacement(ctx, tg, in, other, 1)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := ops.NeighbourReplacement(ctx, tg, in, other, 8)
		if err != nil {
			t.Fatal(err)
		}
		if len(one.Rows) != 0 {
			t.Errorf("%s: a row alone differs from itself", tg.Name())
		}
		if tg.Invariant() != (len(ch.Rows) == 0) {
			t.Errorf("%s (invariant %v): %d of 8 rows depend on their neighbours", tg.Name(), tg.Invariant(), len(ch.Rows))
		}
		if w := op.Words(ch.Batch, ch.Want, ch.Got, ch.Rows); !tg.Invariant() && !strings.Contains(w, "depend on other rows' values") {
			t.Errorf("%s: words %q", tg.Name(), w)
		}
	}
}
