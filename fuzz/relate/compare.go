package relate

import (
	"fmt"
	"sort"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// compareHostTaps compares the fp32 taps of positions pa[i] of a and
// pb[i] of b on the host (fetching device taps), for outputs whose taps
// startDeviceTaps does not compare on the device; nil when either output
// has no taps or their tap columns differ.
func compareHostTaps(a, b *target.Output, pa, pb []int) ([]target.RowDiff, error) {
	has := func(o *target.Output) bool { return o.TapCols > 0 && (o.Taps != nil || o.DeviceTaps != nil) }
	if !has(a) || !has(b) || a.TapCols != b.TapCols {
		return nil, nil
	}
	return compareHost(a.Taps, b.Taps, a.DeviceTaps, b.DeviceTaps, pa, pb, a.TapCols, oracle.FP32, "taps")
}

// startDeviceTaps queues the device compare of the fp32 taps of positions
// pa[i] of a and pb[i] of b when both hold their taps (of the same
// columns) only on the device, and returns the wait for its summaries,
// which must be called once; nil when the taps are not compared there.
func startDeviceTaps(a, b *target.Output, pa, pb []int) func() ([]target.RowDiff, error) {
	if a.TapCols == 0 || a.TapCols != b.TapCols || a.Taps != nil || b.Taps != nil || a.DeviceTaps == nil || b.DeviceTaps == nil {
		return nil
	}
	return startSorted(a.DeviceTaps, b.DeviceTaps, pa, pb, oracle.FP32, "taps")
}

// startSorted is startCompare whose wait orders the summaries as the pairs
// are ordered (sortLike) and names what was compared (values or taps) in
// its error.
func startSorted(a, b target.DeviceOutput, pa, pb []int, dt oracle.DType, what string) func() ([]target.RowDiff, error) {
	wait := startCompare(a, b, pa, pb, dt)
	return func() ([]target.RowDiff, error) {
		diffs, err := wait()
		if err != nil {
			return nil, fmt.Errorf("compare %s on the device: %w", what, err)
		}
		sortLike(diffs, pa, pb)
		return diffs, nil
	}
}

// startCompare queues a device compare of row pa[i] of a with row pb[i] of
// b in dtype dt and returns the wait for its summaries, which must be
// called once: through a.StartCompare when the device queues compares
// (CompareStarter), so a second compare queued behind it is waited for
// with no thread of its own; else CompareRows runs on a goroutine.
func startCompare(a, b target.DeviceOutput, pa, pb []int, dt oracle.DType) func() ([]target.RowDiff, error) {
	if s, ok := a.(target.CompareStarter); ok {
		wait, err := s.StartCompare(b, pa, pb, dt)
		if err != nil {
			return func() ([]target.RowDiff, error) { return nil, err }
		}
		return wait
	}
	type result struct {
		diffs []target.RowDiff
		err   error
	}
	c := make(chan result, 1)
	go func() {
		d, err := a.CompareRows(b, pa, pb, dt)
		c <- result{d, err}
	}()
	return func() ([]target.RowDiff, error) {
		r := <-c
		return r.diffs, r.err
	}
}

// sortLike orders device diffs as the pairs (pa[i], pb[i]) are ordered,
// as CompareHost returns them (a device may return them in any order).
func sortLike(diffs []target.RowDiff, pa, pb []int) {
	if len(diffs) < 2 {
		return
	}
	at := make(map[[2]int]int, len(pa))
	for i := len(pa) - 1; i >= 0; i-- {
		at[[2]int{pa[i], pb[i]}] = i
	}
	sort.SliceStable(diffs, func(i, j int) bool {
		return at[[2]int{diffs[i].PosA, diffs[i].PosB}] < at[[2]int{diffs[j].PosA, diffs[j].PosB}]
	})
}

// comparedPositions maps batch rows ra[i] of a and rb[i] of b (each present
// in its output's Rows) to positions within the outputs: the pairs to
// compare (pa, pb), and apart the pairs either output lists in Filled.
func comparedPositions(a, b *target.Output, ra, rb []int) (pa, pb []int, filled [][2]int, err error) {
	posA, posB := positions(a), positions(b)
	fa, fb := filledSet(a), filledSet(b)
	pa, pb = make([]int, 0, len(ra)), make([]int, 0, len(rb))
	for i := range ra {
		x, y := posA.of(ra[i]), posB.of(rb[i])
		if x < 0 || y < 0 {
			return nil, nil, nil, fmt.Errorf("compare: row %d / %d was not computed", ra[i], rb[i])
		}
		if fa[x] || fb[y] {
			filled = append(filled, [2]int{x, y})
			continue
		}
		pa, pb = append(pa, x), append(pb, y)
	}
	return pa, pb, filled, nil
}

// compareOutputs compares batch rows ra[i] of a with rb[i] of b in dtype
// dt (comparedPositions, then compareValues). Positions either output
// lists in Filled are skipped and returned apart.
func compareOutputs(a, b *target.Output, ra, rb []int, dt oracle.DType) (diffs []target.RowDiff, filled [][2]int, err error) {
	pa, pb, filled, err := comparedPositions(a, b, ra, rb)
	if err != nil {
		return nil, nil, err
	}
	diffs, err = compareValues(a, b, pa, pb, dt)
	return diffs, filled, err
}

// compareValues compares positions pa[i] of a with pb[i] of b in dtype dt:
// on the device when both outputs live there, on the host otherwise.
func compareValues(a, b *target.Output, pa, pb []int, dt oracle.DType) ([]target.RowDiff, error) {
	return startValues(a, b, pa, pb, dt)()
}

// startValues is compareValues in two halves: when both outputs live on a
// device it queues their compare (startCompare: no wait) and returns the
// wait for its summaries, which must be called once; else the rows are
// compared on the host when the wait is called.
func startValues(a, b *target.Output, pa, pb []int, dt oracle.DType) func() ([]target.RowDiff, error) {
	if a.Device != nil && b.Device != nil {
		return startSorted(a.Device, b.Device, pa, pb, dt, "values")
	}
	return func() ([]target.RowDiff, error) {
		return compareHost(a.Values, b.Values, a.Device, b.Device, pa, pb, a.Cols, dt, "output")
	}
}

// compareHost compares row pa[i] of one output part (its host values av,
// else its device copy da) with row pb[i] of another (bv, db) on the host,
// cols values a row in dtype dt, fetching only the compared rows of a part
// that is on the device (hostRows); what names the part in a fetch error.
func compareHost(av, bv []float32, da, db target.DeviceOutput, pa, pb []int, cols int, dt oracle.DType, what string) ([]target.RowDiff, error) {
	ha, qa, err := hostRows(av, da, pa)
	if err != nil {
		return nil, fmt.Errorf("fetch device %s: %w", what, err)
	}
	hb, qb, err := hostRows(bv, db, pb)
	if err != nil {
		return nil, fmt.Errorf("fetch device %s: %w", what, err)
	}
	return renumber(target.CompareSlices(ha, hb, cols, qa, qb, dt), pa, pb, qa, qb), nil
}

// hostRows returns the rows at positions pos of an output part on the
// host and the positions to read them at: vals and pos when the rows are
// on the host, else only those rows fetched from dev (position i of the
// result is pos[i]), so a compare of a host output with a device output
// moves the compared rows, not the whole output.
func hostRows(vals []float32, dev target.DeviceOutput, pos []int) ([]float32, []int, error) {
	if vals != nil || dev == nil {
		return vals, pos, nil
	}
	v, err := dev.Fetch(pos)
	if err != nil {
		return nil, nil, err
	}
	return v, spec.Iota(len(pos)), nil
}

// renumber maps the positions of diffs, made against positions qa and qb,
// back to the outputs' positions pa and pb.
func renumber(diffs []target.RowDiff, pa, pb, qa, qb []int) []target.RowDiff {
	back := func(p, q []int) map[int]int {
		m := make(map[int]int, len(q))
		for i := range q {
			m[q[i]] = p[i]
		}
		return m
	}
	ma, mb := back(pa, qa), back(pb, qb)
	for i := range diffs {
		diffs[i].PosA, diffs[i].PosB = ma[diffs[i].PosA], mb[diffs[i].PosB]
	}
	return diffs
}

// rowPositions maps a batch row to its position in an output's Rows.
type rowPositions struct {
	identity bool  // Rows[i] == i for every i
	n        int   // len(Rows)
	at       []int // at[row] = position + 1 (0: not computed), when not identity
}

// of returns the position of batch row r, or -1 when it was not computed.
func (p rowPositions) of(r int) int {
	switch {
	case r < 0:
		return -1
	case p.identity:
		if r < p.n {
			return r
		}
		return -1
	case r < len(p.at):
		return p.at[r] - 1
	}
	return -1
}

// positions indexes o.Rows (the first position of a row listed twice).
func positions(o *target.Output) rowPositions {
	p := rowPositions{identity: true, n: len(o.Rows)}
	top := -1
	for i, r := range o.Rows {
		if r != i {
			p.identity = false
		}
		top = max(top, r)
	}
	if p.identity {
		return p
	}
	p.at = make([]int, top+1)
	for i, r := range o.Rows {
		if r >= 0 && p.at[r] == 0 {
			p.at[r] = i + 1
		}
	}
	return p
}

func filledSet(o *target.Output) map[int]bool {
	if len(o.Filled) == 0 {
		return nil
	}
	m := make(map[int]bool, len(o.Filled))
	for _, p := range o.Filled {
		m[p] = true
	}
	return m
}

// rowAt returns the output's position pos, its values or, with taps, its
// fp32 taps, fetching that one row from the device when it lives there.
func rowAt(o *target.Output, taps bool, pos int) ([]float32, error) {
	vals, cols, dev, what := o.Values, o.Cols, o.Device, "values"
	if taps {
		vals, cols, dev, what = o.Taps, o.TapCols, o.DeviceTaps, "taps"
	}
	if vals != nil {
		return vals[pos*cols : (pos+1)*cols], nil
	}
	if dev == nil {
		return nil, fmt.Errorf("output has its %s neither on the host nor on a device", what)
	}
	row, err := dev.Fetch([]int{pos})
	if err != nil {
		return nil, fmt.Errorf("fetch the %s of row %d: %w", what, o.Rows[pos], err)
	}
	return row, nil
}

// worstColumn is the column a finding reports for the differing row d of
// ra against rb: the first column whose bits differ in dt at the row's
// largest distance d.MaxULPs, so the finding's ulps are the row's
// max_ulps. With an ulp bound that column is one that breaks the bound
// (the first differing column may lie within it). It is d.FirstCol when
// no column has that distance (a compare that disagrees with this one).
func worstColumn(ra, rb []float32, dt oracle.DType, d target.RowDiff) int {
	for j := d.FirstCol; j >= 0 && j < len(ra) && j < len(rb); j++ {
		x, y := oracle.ToBits(dt, ra[j]), oracle.ToBits(dt, rb[j])
		if x != y && oracle.ULPDistanceBits(dt, x, y).ULPs == d.MaxULPs {
			return j
		}
	}
	return d.FirstCol
}

// specValue formats v as bits of dt and the decimal of its dt value.
func specValue(dt oracle.DType, v float32) spec.Value {
	return spec.Value{Hex: oracle.Hex(dt, v), Dec: oracle.Decimal(oracle.Round(dt, v))}
}

// maxMismatches is how many differing rows a finding lists.
const maxMismatches = 64

// summarize turns diffs into the finding's per-row summaries (batch rows of
// a), up to maxMismatches.
func summarize(a *target.Output, diffs []target.RowDiff, cols int) []spec.RowMismatch {
	var ms []spec.RowMismatch
	for _, d := range diffs {
		if len(ms) == maxMismatches {
			break
		}
		ms = append(ms, spec.RowMismatch{Row: a.Rows[d.PosA], Count: d.Count, FirstCol: d.FirstCol,
			MaxULPs: d.MaxULPs, Cols: cols})
	}
	return ms
}
