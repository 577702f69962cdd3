package scan

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
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
// positions a digest (witnessDigest of their row digests). A device
// output that digests its rows (target.RowDigester: a GPU's) is digested
// there, 8 bytes a row coming back; any other is fetched, only those
// rows, and digested on the host.
func witnesses(o *target.Output, pos []int, k int) ([]string, error) {
	vals, taps, err := rowDigests(o, pos)
	if err != nil {
		return nil, err
	}
	ds := make([]string, len(pos)/k)
	for i := range ds {
		var t []uint64
		if taps != nil {
			t = taps[i*k : (i+1)*k]
		}
		ds[i] = witnessDigest(vals[i*k:(i+1)*k], t)
	}
	return ds, nil
}

// rowDigests returns the row digests (external.RowDigest) of o's
// positions pos, and of their taps when o has taps (else nil).
func rowDigests(o *target.Output, pos []int) (vals, taps []uint64, err error) {
	if o.Values != nil {
		return hostDigests(o.Values, o.Cols, o.DType, pos), tapDigests(o.Taps, o.TapCols, pos), nil
	}
	hasTaps := o.DeviceTaps != nil && o.TapCols > 0
	dv, okV := o.Device.(target.RowDigester)
	dt, okT := o.DeviceTaps.(target.RowDigester)
	if okV && (!hasTaps || okT) {
		if vals, err = dv.RowDigests(pos); err != nil {
			return nil, nil, fmt.Errorf("digest the witness rows: %w", err)
		}
		if hasTaps {
			if taps, err = dt.RowDigests(pos); err != nil {
				return nil, nil, fmt.Errorf("digest the witness taps: %w", err)
			}
		}
		return vals, taps, nil
	}
	all := spec.Iota(len(pos))
	v, err := o.Device.Fetch(pos)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch the witness rows: %w", err)
	}
	vals = hostDigests(v, o.Cols, o.DType, all)
	if hasTaps {
		t, err := o.DeviceTaps.Fetch(pos)
		if err != nil {
			return nil, nil, fmt.Errorf("fetch the witness taps: %w", err)
		}
		taps = tapDigests(t, o.TapCols, all)
	}
	return vals, taps, nil
}

// hostDigests returns external.RowDigest of rows pos of values (cols a
// row), each value as its bits in dt.
func hostDigests(values []float32, cols int, dt oracle.DType, pos []int) []uint64 {
	ds := make([]uint64, len(pos))
	words := make([]uint32, cols)
	for i, p := range pos {
		for j, v := range values[p*cols : (p+1)*cols] {
			words[j] = oracle.ToBits(dt, v)
		}
		ds[i] = external.RowDigest(words)
	}
	return ds
}

// tapDigests is hostDigests of fp32 taps; nil when there are none.
func tapDigests(taps []float32, cols int, pos []int) []uint64 {
	if taps == nil || cols == 0 {
		return nil
	}
	return hostDigests(taps, cols, oracle.FP32, pos)
}

// witnessDigest names a group of rows by their row digests and their
// taps' (nil: no taps): the class label (driftmap.Digest) of the value
// digests, a 0xff byte and the tap digests, each digest 8 bytes little
// endian. It is the same whether the row digests were made on a device or
// on the host.
func witnessDigest(vals, taps []uint64) string {
	h := driftmap.NewDigest()
	var buf [8]byte
	for _, d := range vals {
		binary.LittleEndian.PutUint64(buf[:], d)
		h.Write(buf[:])
	}
	h.Write([]byte{0xff})
	for _, d := range taps {
		binary.LittleEndian.PutUint64(buf[:], d)
		h.Write(buf[:])
	}
	return h.Label()
}
