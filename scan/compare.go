package scan

import (
	"fmt"
	"sort"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// differing compares position pa[i] of a with position pb[i] of b: the
// output bits in dt and, unless noTaps, the fp32 taps; on the device when
// both outputs hold them there, else on the host. It returns the indices i
// whose rows differ, ascending.
func differing(a, b *target.Output, pa, pb []int, dt oracle.DType, noTaps bool) ([]int, error) {
	return startDiffering(a, b, pa, pb, dt, noTaps)()
}

// startDiffering is differing in two halves: it queues the device
// compares (target.CompareStarter: no wait) and returns the wait for their
// result, which must be called once. Host compares run at once.
func startDiffering(a, b *target.Output, pa, pb []int, dt oracle.DType, noTaps bool) func() ([]int, error) {
	fail := func(err error) func() ([]int, error) { return func() ([]int, error) { return nil, err } }
	if len(pa) == 0 {
		return func() ([]int, error) { return nil, nil }
	}
	var waits []func() ([]target.RowDiff, error)
	device := func(x, y target.DeviceOutput, dt oracle.DType) {
		if s, ok := x.(target.CompareStarter); ok {
			w, err := s.StartCompare(y, pa, pb, dt)
			if err != nil {
				w = func() ([]target.RowDiff, error) { return nil, err }
			}
			waits = append(waits, w)
			return
		}
		ds, err := x.CompareRows(y, pa, pb, dt)
		waits = append(waits, func() ([]target.RowDiff, error) { return ds, err })
	}
	host := func(x, y *target.Output, dt oracle.DType) {
		ds := target.CompareHost(x, y, pa, pb, dt)
		waits = append(waits, func() ([]target.RowDiff, error) { return ds, nil })
	}
	if a.Device != nil && b.Device != nil {
		device(a.Device, b.Device, dt)
	} else {
		if err := firstErr(a.ToHost(), b.ToHost()); err != nil {
			return fail(err)
		}
		host(a, b, dt)
	}
	if !noTaps && a.TapCols > 0 && a.TapCols == b.TapCols {
		if a.DeviceTaps != nil && b.DeviceTaps != nil && a.Taps == nil && b.Taps == nil {
			device(a.DeviceTaps, b.DeviceTaps, oracle.FP32)
		} else if err := firstErr(a.ToHost(), b.ToHost()); err != nil {
			for _, w := range waits {
				w()
			}
			return fail(err)
		} else {
			host(&target.Output{Rows: a.Rows, Cols: a.TapCols, Values: a.Taps},
				&target.Output{Rows: b.Rows, Cols: b.TapCols, Values: b.Taps}, oracle.FP32)
		}
	}
	return func() ([]int, error) {
		var all []target.RowDiff
		var first error
		for _, w := range waits { // every wait, also after an error: each frees its compare
			ds, err := w()
			if err != nil && first == nil {
				first = fmt.Errorf("compare: %w", err)
			}
			all = append(all, ds...)
		}
		if first != nil || len(all) == 0 {
			return nil, first
		}
		at := make(map[int]int, len(pa))
		for i, p := range pa {
			at[p] = i
		}
		set := map[int]bool{}
		for _, d := range all {
			set[at[d.PosA]] = true
		}
		idx := make([]int, 0, len(set))
		for i := range set {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		return idx, nil
	}
}

// rowsOf expands item positions to row positions, k rows an item (items
// itself when k is 1: callers never write the result).
func rowsOf(items []int, k int) []int {
	if k == 1 {
		return items
	}
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
func witness(o *target.Output, lo, hi int) (string, error) {
	pos := make([]int, 0, hi-lo)
	for p := lo; p < hi; p++ {
		pos = append(pos, p)
	}
	ds, err := witnesses(o, pos, hi-lo)
	if err != nil {
		return "", err
	}
	return ds[0], nil
}

// witnesses returns the digests of the bits of o's positions pos, k
// positions a digest, fetching only those rows, in one copy each for the
// values and the taps, when o lives on a device.
func witnesses(o *target.Output, pos []int, k int) ([]string, error) {
	w := o
	if o.Values == nil {
		w = &target.Output{Cols: o.Cols, TapCols: o.TapCols}
		var err error
		if w.Values, err = o.Device.Fetch(pos); err != nil {
			return nil, fmt.Errorf("fetch the witness rows: %w", err)
		}
		if o.DeviceTaps != nil && o.TapCols > 0 {
			if w.Taps, err = o.DeviceTaps.Fetch(pos); err != nil {
				return nil, fmt.Errorf("fetch the witness taps: %w", err)
			}
		}
		pos = identity(len(pos))
	}
	ds := make([]string, len(pos)/k)
	for i := range ds {
		ds[i] = digestAt(w, pos[i*k:(i+1)*k])
	}
	return ds, nil
}
