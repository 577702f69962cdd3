package scan

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/target"
)

// The bulk check (bulk.go) of a batch an adapter holds. The prefixes of
// a window go to the adapter in frames of prefix steps (fits), as
// the per-step path asks for them ahead; the answers the per-step path
// already asked for ahead are used, not asked again. A step the adapter
// compared with the items alone (external.Step.Compared) names its rows
// that differ from them, so a step that names none passed, whatever its
// size, with no row looked at here; only a flagged step's rows are
// compared with the reference batch, by digest. Without the adapter's
// compare every row's digest is compared with its item alone's.
//
// A flagged step's panel digests are the adapter's row digests
// (external.RowDigest), the digests the per-step path's witnesses are, so
// both paths give one class.

// checkPrefixes is the bulk check of the prefixes q.items (prefixChecker).
func (h *execHeld) checkPrefixes(ctx context.Context, q prefixQuery) ([]*prefixStep, error) {
	h.ctx = ctx
	alone, err := digestsOf(q.alone)
	if err != nil {
		return nil, fmt.Errorf("the items alone: %w", err)
	}
	ref, err := digestsOf(q.ref)
	if err != nil {
		return nil, fmt.Errorf("the reference batch: %w", err)
	}
	var found []*prefixStep
	check := func(v int, st *external.Step) {
		if f := flagPrefix(v, h.kr, st, alone, ref, q); f != nil {
			found = append(found, f)
		}
	}
	var sizes []int
	rows := 0
	flush := func() error {
		if len(sizes) == 0 {
			return nil
		}
		sts, err := h.t.StepPrefixes(ctx, sizes)
		if err != nil {
			return err
		}
		for k, st := range sts {
			check(sizes[k], st)
		}
		sizes, rows = sizes[:0], 0
		return nil
	}
	for _, v := range q.items {
		if st, ok := h.ahead[v]; ok {
			delete(h.ahead, v)
			if err := flush(); err != nil { // the steps before v, in order
				return nil, err
			}
			check(v, st)
			continue
		}
		if len(sizes) > 0 && !h.fits(len(sizes), rows, v) {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		sizes = append(sizes, v)
		rows += v * h.kr
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return found, nil
}

// adapterDigests are an output's row digests on the adapter's side: its
// values' and, when it has taps, its taps'.
type adapterDigests struct {
	d, taps []uint64
	tapCols int
}

// digestsOf returns the digests of o, an output of an adapter's held
// batch.
func digestsOf(o *target.Output) (adapterDigests, error) {
	v, ok := o.Device.(*digestRows)
	if !ok {
		return adapterDigests{}, fmt.Errorf("an output of %T, not an adapter's digests", o.Device)
	}
	r := adapterDigests{d: v.d, tapCols: o.TapCols}
	if o.TapCols > 0 {
		t, ok := o.DeviceTaps.(*digestRows)
		if !ok {
			return adapterDigests{}, fmt.Errorf("taps of %T, not an adapter's digests", o.DeviceTaps)
		}
		r.taps = t.d
	}
	return r, nil
}

// differs reports whether row r of step st differs from row r of o: its
// value digests, or, when taps are compared, its taps' width or digests.
func (o adapterDigests) differs(st *external.Step, r int, taps bool) bool {
	if st.Digests[r] != o.d[r] {
		return true
	}
	if !taps || (st.TapCols == 0 && o.tapCols == 0) {
		return false
	}
	return st.TapCols != o.tapCols || st.TapDigests[r] != o.taps[r]
}

// flagPrefix returns what the bulk check finds on step st, the prefix of
// v held items (kr rows each), when a row differs from its item alone;
// nil when none does.
func flagPrefix(v, kr int, st *external.Step, alone, ref adapterDigests, q prefixQuery) *prefixStep {
	rows := v * kr
	f := &prefixStep{v: v}
	if st.Compared {
		for _, r := range st.Named { // named for its values or its taps: the compare decides
			if alone.differs(st, r, q.taps) {
				f.alone = append(f.alone, r)
			}
		}
	} else {
		for r := range rows {
			if alone.differs(st, r, q.taps) {
				f.alone = append(f.alone, r)
			}
		}
	}
	if len(f.alone) == 0 {
		return nil
	}
	for r := range rows {
		if ref.differs(st, r, q.taps) {
			f.ref = append(f.ref, r)
		}
	}
	panel := min(rows, q.panel)
	f.panel = st.Digests[:panel:panel]
	f.sum = foldDigests(0, st.Digests[:rows])
	if st.TapCols > 0 { // a witness digests its taps whether or not they are compared, as compare's do
		f.panelTaps = st.TapDigests[:panel:panel]
		if q.taps {
			f.sum = foldDigests(f.sum, st.TapDigests[:rows])
		}
	}
	return f
}

// foldDigests folds the row digests ds into s: s = (s ^ d) * P for each d
// in order (P the 64-bit FNV prime), so two runs that answer every row
// alike fold alike.
func foldDigests(s uint64, ds []uint64) uint64 {
	const prime = 1099511628211
	for _, d := range ds {
		s = (s ^ d) * prime
	}
	return s
}
