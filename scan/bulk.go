package scan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bitparity/bitparity/spec"
)

// The bulk check of a draw's prefix steps. In a scan of the items
// dimension on a batch held where the target computes (a prefixChecker:
// the GPU's resident rmsnorm batch), the values v >= PanelItems are first
// checked in windows of bulkWindow values by the device's bulk check:
// every row of the batch of items 0..v-1 against its item alone, by
// digests, with no host round trip a step. Then, value by value, in order:
//
//	passed   (no row differs from its item alone) the class is every panel
//	         item "=", as itemsClass gives a step whose rows all equal
//	         their items alone; one batch and v*kr rows compared are
//	         counted; the rows whose items differ from themselves alone in
//	         the reference batch differ from it here too (bitwise equality
//	         is transitive), and are recorded against the largest batch as
//	         compare would, without running that compare
//	flagged  the step runs again through the per-step path (start,
//	         finish: the exact compares, the class, the diffs); a rerun
//	         whose count of rows differing from their items alone is not
//	         the bulk check's means the target answered the same batch
//	         twice with other bits: the value is nondeterministic
//	         (determinism.go)
//
// Values below PanelItems always take the per-step path: their class also
// runs gathers of v items, which the prefix check does not cover.

// bulkWindow is the number of values one bulk check covers: progress,
// Options.Before and the context are served between windows.
const bulkWindow = 1024

// bulk is the bulk check of one draw.
type bulk struct {
	c       prefixChecker
	lo      int         // the first value checked in bulk
	to      int         // the last: the range's end
	through int         // values lo..through are checked so far
	flagged map[int]int // value -> rows the check found differing from their items alone
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
	return &bulk{c: c, lo: lo, to: sc.s.To, through: lo - 1, flagged: map[int]int{}, refRows: refRows,
		equal: allEqual(min(sc.s.To, PanelItems))}
}

// checked reports whether value v was checked in bulk, checking the
// window from v first when v is past what was checked; flagged is the
// check's count of rows differing from their items alone (0: passed).
func (st *steps) checked(v int) (ok bool, flagged int, err error) {
	b := st.bulk
	if b == nil || v < b.lo {
		return false, 0, nil
	}
	if v > b.through {
		last := min(v+bulkWindow-1, b.to)
		st.sc.before(st.k, "%s = %d..%d, checked in bulk", mapDim(st.sc.s), v, last)
		m, err := b.c.checkPrefixes(st.ctx, v, last, st.alone, !st.sc.s.NoTaps)
		if err != nil {
			return false, 0, fmt.Errorf("the bulk check of %d..%d: %w", v, last, err)
		}
		for u, n := range m {
			if u < v || u > last || n <= 0 {
				return false, 0, fmt.Errorf("the bulk check of %d..%d flagged value %d with %d rows", v, last, u, n)
			}
			b.flagged[u] = n
		}
		b.through = last
	}
	return true, b.flagged[v], nil
}

// pass records value p.v, which the bulk check passed, and returns its
// class: what compare finds for a step whose rows all equal their items
// alone.
func (st *steps) pass(p *step) string {
	sc, rows := st.sc, p.v*st.kr
	sc.res.Batches++
	sc.res.RowsCompared += int64(rows)
	refRows := st.bulk.refRows
	if n := sort.SearchInts(refRows, rows); n > 0 {
		sc.res.Differing += int64(n)
		sc.res.Diffs = append(sc.res.Diffs, Diff{Draw: sc.draws[st.k], Value: p.v, Rows: n, FirstRow: refRows[0], Against: "largest batch"})
	}
	return st.bulk.equal
}

// rerunAgrees checks a flagged value's rerun: dA are the rows of the
// rerun that differ from their items alone.
func (st *steps) rerunAgrees(p *step, dA []int) error {
	if p.flagged == 0 || len(dA) == p.flagged {
		return nil
	}
	return &nondeterminism{rows: 1, first: -1, detail: fmt.Sprintf("the bulk check found %d rows differing from their items alone, "+
		"the same batch run again %d", p.flagged, len(dA))}
}

// allEqual is the class of a value whose p panel items all equal
// themselves alone.
func allEqual(p int) string { return strings.Repeat("= ", p-1) + "=" }
