//go:build cuda

package gpu

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// TestCompareLeavesCountersZero: compare_rows's last block hands the count
// to the host and zeroes the counters, so compares reusing one slot, with
// more pairs than blocks (the grid strides) and fewer, each count only
// their own rows: a found difference, then none, then one again.
func TestCompareLeavesCountersZero(t *testing.T) {
	d := device(t)
	for _, rows := range []int{1, 37, 1<<20 + 4099} {
		a := &target.Output{Rows: identityN(rows), Cols: 3, DType: oracle.BF16, Values: make([]float32, rows*3)}
		for i := range a.Values {
			a.Values[i] = float32(i%251) / 8
		}
		b := *a
		b.Values = slices.Clone(a.Values)
		last := len(b.Values) - 1
		b.Values[last] = oracle.BF16ToF32(oracle.BF16FromF32(b.Values[last]) ^ 1)
		da, err := d.Upload(a)
		if err != nil {
			t.Fatal(err)
		}
		db, err := d.Upload(&b)
		if err != nil {
			t.Fatal(err)
		}
		pairs := identityN(rows)
		want := fmt.Sprint([]target.RowDiff{{PosA: rows - 1, PosB: rows - 1, Count: 1, FirstCol: 2, MaxULPs: 1}})
		for i, other := range []target.DeviceOutput{db, da, db, da} {
			got, err := da.CompareRows(other, pairs, pairs, oracle.BF16)
			if err != nil {
				t.Fatal(err)
			}
			if w := map[bool]string{true: want, false: "[]"}[i%2 == 0]; fmt.Sprint(got) != w {
				t.Errorf("%d rows, compare %d: got %v, want %s", rows, i, got, w)
			}
		}
		da.Release()
		db.Release()
	}
}
