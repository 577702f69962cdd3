package scan

import (
	"fmt"
	"sort"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/oracle"
)

// differing compares position pa[i] of a with position pb[i] of b: the
// output bits in dt and, unless noTaps, the fp32 taps; on the device when
// both outputs hold them there, else on the host. It returns the indices i
// whose rows differ, ascending.
func differing(a, b *fuzz.Output, pa, pb []int, dt oracle.DType, noTaps bool) ([]int, error) {
	if len(pa) == 0 {
		return nil, nil
	}
	at := make(map[int]int, len(pa))
	for i, p := range pa {
		at[p] = i
	}
	set := map[int]bool{}
	add := func(ds []fuzz.RowDiff) {
		for _, d := range ds {
			set[at[d.PosA]] = true
		}
	}
	if a.Device != nil && b.Device != nil {
		ds, err := a.Device.CompareRows(b.Device, pa, pb, dt)
		if err != nil {
			return nil, fmt.Errorf("compare on the device: %w", err)
		}
		add(ds)
	} else {
		if err := firstErr(a.ToHost(), b.ToHost()); err != nil {
			return nil, err
		}
		add(fuzz.CompareHost(a, b, pa, pb, dt))
	}
	if !noTaps && a.TapCols > 0 && a.TapCols == b.TapCols {
		if a.DeviceTaps != nil && b.DeviceTaps != nil && a.Taps == nil && b.Taps == nil {
			ds, err := a.DeviceTaps.CompareRows(b.DeviceTaps, pa, pb, oracle.FP32)
			if err != nil {
				return nil, fmt.Errorf("compare taps on the device: %w", err)
			}
			add(ds)
		} else {
			if err := firstErr(a.ToHost(), b.ToHost()); err != nil {
				return nil, err
			}
			ta := &fuzz.Output{Rows: a.Rows, Cols: a.TapCols, Values: a.Taps}
			tb := &fuzz.Output{Rows: b.Rows, Cols: b.TapCols, Values: b.Taps}
			add(fuzz.CompareHost(ta, tb, pa, pb, oracle.FP32))
		}
	}
	idx := make([]int, 0, len(set))
	for i := range set {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	return idx, nil
}

// rowsOf expands item positions to row positions, k rows an item.
func rowsOf(items []int, k int) []int {
	rows := make([]int, 0, len(items)*k)
	for _, it := range items {
		for r := it * k; r < (it+1)*k; r++ {
			rows = append(rows, r)
		}
	}
	return rows
}

// witness returns the digest of the bits of positions [lo, hi) of o,
// fetching only those rows when o lives on a device.
func witness(o *fuzz.Output, lo, hi int) (string, error) {
	if o.Values != nil {
		return digestRows(o, lo, hi), nil
	}
	pos := make([]int, 0, hi-lo)
	for p := lo; p < hi; p++ {
		pos = append(pos, p)
	}
	w := &fuzz.Output{Cols: o.Cols, TapCols: o.TapCols}
	var err error
	if w.Values, err = o.Device.Fetch(pos); err != nil {
		return "", fmt.Errorf("fetch the witness rows: %w", err)
	}
	if o.DeviceTaps != nil && o.TapCols > 0 {
		if w.Taps, err = o.DeviceTaps.Fetch(pos); err != nil {
			return "", fmt.Errorf("fetch the witness taps: %w", err)
		}
	}
	return digestRows(w, 0, hi-lo), nil
}
