//go:build cuda

package gpu

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestCompareLeavesCountersZero: compare_rows's last block hands the count
// to the host and zeroes the counters, so compares reusing one slot, with
// more pairs than blocks (the grid strides) and fewer, each count only
// their own rows: a found difference, then none, then one again.
func TestCompareLeavesCountersZero(t *testing.T) {
	d := device(t)
	for _, rows := range []int{1, 37, 1<<20 + 4099} {
		a := &target.Output{Rows: spec.Iota(rows), Cols: 3, DType: oracle.BF16, Values: make([]float32, rows*3)}
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
		pairs := spec.Iota(rows)
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

// TestFetch reads rows back in any order and with repeats, by both paths:
// queued into a slot (small) and synchronous (above fetchAsyncMax), and
// fails on a released output.
func TestFetch(t *testing.T) {
	d := device(t)
	for _, tc := range []struct {
		rows, cols int
		dt         oracle.DType
		pos        []int
	}{
		{9, 5, oracle.BF16, []int{3, 4, 5, 0, 8, 8, 2}},
		{9, 3, oracle.FP32, []int{3, 4, 5, 0, 8, 8, 2}},
		{4, fetchAsyncMax / 4, oracle.BF16, []int{3, 0, 1}}, // 1.5 fetchAsyncMax
	} {
		rows, pos := tc.rows, tc.pos
		o := &target.Output{Rows: spec.Iota(rows), Cols: tc.cols, DType: tc.dt, Values: make([]float32, rows*tc.cols)}
		for i := range o.Values {
			o.Values[i] = oracle.Round(tc.dt, float32(i%1013)/16-20)
		}
		do, err := d.Upload(o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := do.Fetch(pos)
		if err != nil {
			t.Fatal(err)
		}
		var want []float32
		for _, p := range pos {
			want = append(want, o.Values[p*tc.cols:(p+1)*tc.cols]...)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d cols of %v: fetched rows %v differ from the uploaded ones", tc.cols, tc.dt, pos)
		}
		do.Release()
		if _, err := do.Fetch(pos[:1]); err == nil {
			t.Errorf("%d cols: fetch from a released output succeeded", tc.cols)
		}
	}
}

// TestRowDigests: an output's row digests made on the device
// (devOut.RowDigests, digest_rows) are external.RowDigest of its rows'
// bits, in the order asked, repeats included; a released output and a
// position outside it are errors.
func TestRowDigests(t *testing.T) {
	d := device(t)
	for _, tc := range []struct {
		rows, cols int
		dt         oracle.DType
		pos        []int
	}{
		{9, 4096, oracle.BF16, []int{3, 4, 5, 0, 8, 8, 2}},
		{9, 7, oracle.FP16, []int{8, 0}},
		{5, 3, oracle.FP32, []int{4, 1, 1}},
	} {
		o := &target.Output{Rows: spec.Iota(tc.rows), Cols: tc.cols, DType: tc.dt, Values: make([]float32, tc.rows*tc.cols)}
		for i := range o.Values {
			o.Values[i] = oracle.Round(tc.dt, float32(i%1013)/16-20)
		}
		do, err := d.Upload(o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := do.(target.RowDigester).RowDigests(tc.pos)
		if err != nil {
			t.Fatal(err)
		}
		words := make([]uint32, tc.cols)
		for i, p := range tc.pos {
			for j, v := range o.Values[p*tc.cols : (p+1)*tc.cols] {
				words[j] = oracle.ToBits(tc.dt, v)
			}
			if want := external.RowDigest(words); got[i] != want {
				t.Errorf("%d cols of %v, row %d: device digest %#x, external.RowDigest %#x", tc.cols, tc.dt, p, got[i], want)
			}
		}
		if _, err := do.(target.RowDigester).RowDigests([]int{tc.rows}); err == nil {
			t.Errorf("%d cols: a digest of row %d of %d succeeded", tc.cols, tc.rows, tc.rows)
		}
		do.Release()
		if _, err := do.(target.RowDigester).RowDigests(tc.pos[:1]); err == nil {
			t.Errorf("%d cols: digests of a released output succeeded", tc.cols)
		}
	}
}
