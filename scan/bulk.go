package scan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The bulk check of a draw's prefix steps. In a scan of the items
// dimension on a batch held where the target computes (a prefixChecker:
// the GPU's held batches), the values v >= PanelItems are checked in
// windows of bulkWindow values by the device's bulk check: every row of
// the batch of items 0..v-1 against its item alone and against the same
// row of the reference batch, by digests, with no host round trip a step.
// The check runs twice: the window, then again the values it flagged (a
// row differing from its item alone), and a flagged value's two answers
// must agree. Then, value by value, in order:
//
//	passed   (no row differs from its item alone) the class is every panel
//	         item "=", as itemsClass gives a step whose rows all equal
//	         their items alone; one batch and v*kr rows compared are
//	         counted; the rows whose items differ from themselves alone in
//	         the reference batch differ from it here too (bitwise equality
//	         is transitive), and are recorded against the largest batch as
//	         compare would, without running that compare
//	flagged  settled from what the check found, as compare settles a
//	         step it ran twice: the rows differing from their items alone
//	         and from the largest batch recorded, the class the panel
//	         items' bits (their row digests), "+tail" as itemsClass adds
//	         it; two batches and 3*v*kr rows compared are counted (the
//	         step, its compares with the items alone and the reference
//	         batch, its second run). A value whose two answers differ is
//	         nondeterministic (determinism.go).
//
// Values below PanelItems always take the per-step path: their class also
// runs gathers of v items, which the prefix check does not cover.

// bulkWindow is the number of values one bulk check covers: progress,
// Options.Before and the context are served between windows.
const bulkWindow = 1024

// prefixQuery is one bulk check: the prefixes items (the batches of held
// items 0..v-1, ascending), compared row by row with alone (the items
// alone) and ref (the reference batch), with their fp32 taps when taps;
// a flagged step returns the digests of its first panel rows.
type prefixQuery struct {
	items      []int
	alone, ref *target.Output
	taps       bool
	panel      int
}

// prefixStep is what the bulk check found on a prefix with a row that
// differs from its item alone.
type prefixStep struct {
	v int
	// alone and ref are the step's rows that differ from the same row
	// alone and in the reference batch, ascending.
	alone, ref []int
	// panel are the row digests (external.RowDigest) of the step's rows
	// 0..min(v*kr, query's panel)-1, panelTaps of their taps (nil when
	// the output has none).
	panel, panelTaps []uint64
	// sum digests the step's whole output (its values, and its taps when
	// compared): two runs that answer alike have the same sum.
	sum uint64
	// again is "" when the check's second run of the step answered as
	// the first, else how the two differ.
	again string
}

// bulk is the bulk check of one draw.
type bulk struct {
	c       prefixChecker
	lo      int                 // the first value checked in bulk
	to      int                 // the last: the range's end
	through int                 // values lo..through are checked so far
	found   map[int]*prefixStep // the values the check flagged
	// refRows are the rows of the reference batch that differ from their
	// items alone, ascending.
	refRows []int
	equal   string // the class of a passed value (allEqual), made once
}

// newBulk returns the bulk check of draw st, or nil when the draw takes
// the per-step path for every value: another dimension, a held batch
// without the check, a range below PanelItems, outputs whose stored
// dtype is not the compare dtype (the check compares stored bits), or
// the per-step path asked for (Options.perStep).
func (st *steps) newBulk(refRows []int) *bulk {
	sc := st.sc
	c, ok := st.h.(prefixChecker)
	lo := max(sc.s.From, PanelItems)
	if !ok || sc.s.Dim != spec.ScanItems || lo > sc.s.To || st.alone.DType != sc.dt || sc.opt.perStep {
		return nil
	}
	return &bulk{c: c, lo: lo, to: sc.s.To, through: lo - 1, found: map[int]*prefixStep{}, refRows: refRows,
		equal: allEqual(min(sc.s.To, PanelItems))}
}

// checked reports whether value v was checked in bulk, checking the
// window from v first when v is past what was checked; f is what the
// check found when it flagged v (nil: passed).
func (st *steps) checked(v int) (ok bool, f *prefixStep, err error) {
	b := st.bulk
	if b == nil || v < b.lo {
		return false, nil, nil
	}
	if v > b.through {
		last := min(v+bulkWindow-1, b.to)
		if err := st.checkWindow(v, last); err != nil {
			return false, nil, fmt.Errorf("the bulk check of %d..%d: %w", v, last, err)
		}
		b.through = last
	}
	return true, b.found[v], nil
}

// checkWindow checks values v..last in bulk, then checks the values it
// flagged again and keeps what it found on them.
func (st *steps) checkWindow(v, last int) error {
	sc, b := st.sc, st.bulk
	q := prefixQuery{items: make([]int, 0, last-v+1), alone: st.alone, ref: st.ref, taps: !sc.s.NoTaps,
		panel: min(sc.s.To, PanelItems) * st.kr}
	for u := v; u <= last; u++ {
		q.items = append(q.items, u)
	}
	sc.before(st.k, "%s = %d..%d, checked in bulk", mapDim(sc.s), v, last)
	first, err := st.checkPrefixes(q)
	if err != nil || len(first) == 0 {
		return err
	}
	q.items = q.items[:0]
	for _, f := range first {
		q.items = append(q.items, f.v)
	}
	sc.before(st.k, "%s = %d..%d, the %d flagged values again", mapDim(sc.s), v, last, len(first))
	second, err := st.checkPrefixes(q)
	if err != nil {
		return fmt.Errorf("the flagged values again: %w", err)
	}
	for _, f := range first {
		var again *prefixStep
		if i, ok := slices.BinarySearchFunc(second, f.v, func(s *prefixStep, v int) int { return s.v - v }); ok {
			again = second[i]
		}
		f.again = f.answeredAs(again)
		b.found[f.v] = f
	}
	return nil
}

// answeredAs returns "" when s, the check's second run of step f (nil:
// not flagged then), answered as f, else how the two differ.
func (f *prefixStep) answeredAs(s *prefixStep) string {
	switch {
	case s == nil:
		return fmt.Sprintf("the bulk check found %d rows differing from their items alone, the same batch run again none", len(f.alone))
	case len(s.alone) != len(f.alone):
		return fmt.Sprintf("the bulk check found %d rows differing from their items alone, the same batch run again %d",
			len(f.alone), len(s.alone))
	case s.sum != f.sum || !slices.Equal(s.alone, f.alone) || !slices.Equal(s.ref, f.ref) ||
		!slices.Equal(s.panel, f.panel) || !slices.Equal(s.panelTaps, f.panelTaps):
		return "the bulk check's two runs of the same batch gave other bits"
	}
	return ""
}

// checkPrefixes runs query q and checks what it returns: steps among q's
// items, ascending, each with a row differing from its item alone and
// every row and digest within its batch.
func (st *steps) checkPrefixes(q prefixQuery) ([]*prefixStep, error) {
	steps, err := st.bulk.c.checkPrefixes(st.ctx, q)
	if err != nil {
		return nil, err
	}
	j := 0
	for _, f := range steps {
		for j < len(q.items) && q.items[j] < f.v {
			j++
		}
		if j == len(q.items) || q.items[j] != f.v {
			return nil, fmt.Errorf("it returned value %d, not asked for or out of order", f.v)
		}
		if err := f.valid(f.v*st.kr, min(f.v*st.kr, q.panel)); err != nil {
			return nil, fmt.Errorf("value %d: %w", f.v, err)
		}
	}
	return steps, nil
}

// valid checks a flagged step of rows rows and panel panel rows.
func (f *prefixStep) valid(rows, panel int) error {
	inBatch := func(rs []int) bool {
		return slices.IsSorted(rs) && (len(rs) == 0 || rs[0] >= 0 && rs[len(rs)-1] < rows)
	}
	switch {
	case len(f.alone) == 0:
		return fmt.Errorf("flagged with no row differing from its item alone")
	case !inBatch(f.alone) || !inBatch(f.ref):
		return fmt.Errorf("differing rows out of order or past its %d rows", rows)
	case len(f.panel) != panel || f.panelTaps != nil && len(f.panelTaps) != panel:
		return fmt.Errorf("%d panel digests and %d of taps, want %d", len(f.panel), len(f.panelTaps), panel)
	}
	return nil
}

// pass records value p.v, which the bulk check passed, and returns its
// class: what compare finds for a step whose rows all equal their items
// alone.
func (st *steps) pass(p *step) string {
	sc, rows := st.sc, p.v*st.kr
	sc.res.Batches++
	sc.res.RowsCompared += int64(rows)
	moved := st.bulk.refRows[:sort.SearchInts(st.bulk.refRows, rows)]
	sc.res.Differing += int64(len(moved))
	sc.recordRows(st.k, p.v, moved, "largest batch")
	return st.bulk.equal
}

// settle records value p.v, which the bulk check flagged, from what the
// check found (p.found), as compare records a step it ran twice, and
// returns its class.
func (st *steps) settle(p *step) string {
	sc, f, kr := st.sc, p.found, st.kr
	sc.res.Batches += 2
	sc.res.RowsCompared += 3 * int64(p.v*kr)
	if f.again != "" {
		return st.nondeterministic(p, &nondeterminism{rows: 1, first: -1, detail: f.again})
	}
	sc.recordRows(st.k, p.v, f.alone, "item alone")
	sc.recordRows(st.k, p.v, f.ref, "largest batch")
	sc.res.Differing += int64(len(union(f.alone, f.ref)))
	moved := make(map[int]bool, len(f.alone))
	for _, r := range f.alone {
		moved[r/kr] = true
	}
	sc.noteMoved(p.v, moved)
	n := len(f.panel) / kr
	bits := make([]string, n)
	for it := range n {
		bits[it] = "="
		if moved[it] {
			var taps []uint64
			if f.panelTaps != nil {
				taps = f.panelTaps[it*kr : (it+1)*kr]
			}
			bits[it] = witnessDigest(f.panel[it*kr:(it+1)*kr], taps)
		}
	}
	return withTail(strings.Join(bits, " "), n, moved)
}

// allEqual is the class of a value whose p panel items all equal
// themselves alone.
func allEqual(p int) string { return strings.Repeat("= ", p-1) + "=" }
