package scan

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
)

// The classes of a scan's values. Two values belong to one class when
// their rows agree on every row they share: on each draw, the panel items
// (computed for every value, so shared by all) and the rows both batches
// hold. A value's class is built from its class on each draw
// (draw.go: the panel's bits, "+tail" when only rows past the panel
// differ from their items alone):
//
//	nondeterministic  on any draw: the value is nondeterministic
//	panels            the tuple of the draws' panel bits, which a path
//	                  fixes for every value alike
//	+tail             appended when every draw's panel equals the items
//	                  alone and a row past the panel differs on some draw
//
// so a path whose new rows happen to show the change on one draw and not
// on another is not split by which rows happened to differ.
//
// A row that cannot show the change on a draw (an insensitive row) can
// make the first values of a path look like the path before it: the onset
// is then known only as an interval. For each onset where values whose
// rows all equal their items alone ("clean") meet a tail class (the
// change shows only in rows past the panel: rows at some positions take
// another path), pin tries the last clean value a below the onset b on
// pinDraws further draws (seeds past the scan's, its distributions in
// turn): a value whose rows differ from their items alone there and agree
// with b's on every row they share joins b's class, and the next value
// below is tried; a value that differs and disagrees is a class of its
// own. An onset whose clean value showed nothing on every further draw
// stays, stated with the draws it took (Result.Onsets).

// pinDraws is how many further draws pin tries a value on; maxPinDraws
// bounds the further draws of a scan (each costs the items alone and two
// batches: a scan of 1..8192 with an onset at every multiple of 64 would
// otherwise try each).
const (
	pinDraws    = 8
	maxPinDraws = 64
)

// Onset is an onset pin tried: Value is the clean value below the onset
// tried on further draws (Draws of them); Joined says its rows showed the
// change and agreed with the class above it (the onset moved down to it),
// Other that they differed from both (a class of its own).
type Onset struct {
	Value  int  `json:"value"`
	Draws  int  `json:"draws"`
	Joined bool `json:"joined,omitempty"`
	Other  bool `json:"other,omitempty"`
}

// classKey is the class of values[i] over the draws (above).
func (sc *scanner) classKey(i int) string {
	panels := make([]string, len(sc.classes))
	tail, clean := false, true
	eq := allEqual(min(sc.s.To, PanelItems))
	for k := range sc.classes {
		c := sc.classes[k][i]
		if c == driftmap.Nondeterministic {
			return c
		}
		p, t := strings.CutSuffix(c, " +tail")
		panels[k] = p
		tail = tail || t
		clean = clean && p == eq
	}
	key := strings.Join(panels, "\x00")
	if sc.s.Dim == spec.ScanItems && clean && tail {
		key += " +tail"
	}
	return key
}

// keys returns the class key of every value.
func (sc *scanner) keys() []string {
	ks := make([]string, len(sc.values))
	for i := range ks {
		ks[i] = sc.classKey(i)
	}
	return ks
}

// cleanKey is the class of a value whose rows equal their items alone on
// every draw; tailKey(key) says a key is a tail class.
func (sc *scanner) cleanKey() string {
	eq := allEqual(min(sc.s.To, PanelItems))
	ps := make([]string, len(sc.classes))
	for k := range ps {
		ps[k] = eq
	}
	return strings.Join(ps, "\x00")
}

// pin moves onsets down through insensitive rows (above) and returns the
// keys updated.
func (sc *scanner) pin(ctx context.Context, keys []string) ([]string, error) {
	if sc.s.Dim != spec.ScanItems || len(sc.classes) == 0 {
		return keys, nil
	}
	clean := sc.cleanKey()
	tail := clean + " +tail"
	used := 0 // further draws run
	for i := len(sc.values) - 1; i > 0; i-- {
		if keys[i] != tail || keys[i-1] != clean || sc.values[i-1] != sc.values[i]-1 {
			continue
		}
		j := i
		for ; j > 0 && keys[j-1] == clean && sc.values[j-1] == sc.values[j]-1; j-- {
			if used+pinDraws > maxPinDraws {
				return keys, nil
			}
			on, err := sc.pinOne(ctx, sc.values[j-1], sc.values[j])
			if err != nil {
				return nil, err
			}
			used += on.Draws
			sc.res.Onsets = append(sc.res.Onsets, on)
			if on.Other {
				keys[j-1] = fmt.Sprintf("another path on a further draw (%d)", sc.values[j-1])
			}
			if !on.Joined {
				break
			}
			keys[j-1] = keys[j]
		}
		i = j // the values below j are not the onset's
	}
	return keys, nil
}

// pinOne tries clean value a below onset b (b = a+1, a tail class) on
// further draws until a's rows differ from their items alone.
func (sc *scanner) pinOne(ctx context.Context, a, b int) (Onset, error) {
	on := Onset{Value: a}
	for e := range pinDraws {
		on.Draws++
		c := sc.caseFor(0)
		c.Dist = sc.s.Dists[e%len(sc.s.Dists)]
		c.Seed = sc.s.Seed + uint64(len(sc.s.Dists)) + uint64(e)
		c.SetBatchRows(b)
		differs, agrees, err := sc.againstOnset(ctx, c, a, b)
		if err != nil {
			return on, fmt.Errorf("scan: pin the onset at %s = %d, further draw %s seed %d: %w", mapDim(sc.s), b, c.Dist, c.Seed, err)
		}
		if !differs {
			continue
		}
		on.Joined, on.Other = agrees, !agrees
		return on, nil
	}
	return on, nil
}

// againstOnset runs the batches of a and b items of case c's draw and
// reports whether a row of a's batch differs from its item alone and
// whether a's rows agree with b's on every row they share (items
// 0..a-1).
func (sc *scanner) againstOnset(ctx context.Context, c spec.Case, a, b int) (differs, agrees bool, err error) {
	bt, err := inputs.Of(c)
	if err != nil {
		return false, false, err
	}
	h, err := hold(sc.t, bt)
	if err != nil {
		return false, false, err
	}
	defer h.release()
	kr := bt.RowsPerItem()
	alone, err := h.alone(ctx, a)
	if err != nil {
		return false, false, fmt.Errorf("items alone: %w", err)
	}
	defer alone.Release()
	oa, err := h.run(ctx, spec.Iota(a))
	if err != nil {
		return false, false, err
	}
	defer oa.Release()
	rows := rowsOf(spec.Iota(a), kr)
	d, err := differing(oa, alone, rows, rows, sc.dt, sc.s.NoTaps)
	sc.res.Batches += int64(a + 1)
	sc.res.RowsCompared += int64(len(rows))
	if err != nil || len(d) == 0 {
		return false, false, err
	}
	moved := itemsAt(rows, d, kr)
	defer func() {
		if agrees {
			sc.noteMoved(a, moved)
		}
	}()
	ob, err := h.run(ctx, spec.Iota(b))
	if err != nil {
		return true, false, err
	}
	defer ob.Release()
	d, err = differing(oa, ob, rows, rows, sc.dt, sc.s.NoTaps)
	sc.res.Batches++
	sc.res.RowsCompared += int64(len(rows))
	return true, err == nil && len(d) == 0, err
}

// hashKey is the short digest a class key is named by.
func hashKey(k string) string {
	if k == driftmap.Nondeterministic {
		return k // a verdict keeps its name
	}
	return driftmap.Label(k)
}

// positionsNote says, for each tail class of map m (its change shows
// only in rows past the panel) and each class whose differing positions
// share a residue class (driftmap.Positions.Stepped: the odd positions),
// which positions of its batches differed from their items alone
// (driftmap.Positions.Note: "B: positions >= 264 differ", "B: only position
// 299 differs", "B: positions >= 1 with position % 2 == 1 differ", "B: only the last
// position differs"); empty
// when there is none. A class whose change shows in the panel is not
// said to start at a position: a row that cannot show the change may
// stand first.
func (sc *scanner) positionsNote(m *spec.DriftMap, keys []string) string {
	if sc.s.Dim != spec.ScanItems {
		return ""
	}
	var notes []string
	for _, cl := range m.Classes {
		i, ok := slices.BinarySearch(sc.values, cl.Values[0])
		if !ok {
			continue
		}
		var sp driftmap.Positions
		for _, v := range cl.Values {
			sp.Merge(sc.moved[v])
		}
		if strings.HasSuffix(keys[i], " +tail") || sp.Stepped() {
			if n := sp.Note(cl.Label); n != "" {
				notes = append(notes, n)
			}
		}
	}
	return strings.Join(notes, "; ")
}

// noteMoved records the items of value v's batch that differ from their
// items alone on one draw.
func (sc *scanner) noteMoved(v int, moved map[int]bool) {
	if len(moved) == 0 {
		return
	}
	if sc.moved == nil {
		sc.moved = map[int]driftmap.Positions{}
	}
	all := sc.moved[v]
	all.AddBatch(slices.Collect(maps.Keys(moved)), v)
	sc.moved[v] = all
}

// DetailWords says, a line each, each onset pinned on further draws
// ("onset: rows = 265 showed the change on further draw 3 of 8 and
// joined the class above it", "onset: rows = 264 showed no change on 8
// further draws").
func DetailWords(r *Result) []string {
	var out []string
	dim := r.Map.Dim
	for _, o := range r.Onsets {
		switch {
		case o.Joined:
			out = append(out, fmt.Sprintf("onset: %s = %d showed the change on further draw %d of %d and joined the class above it", dim, o.Value, o.Draws, pinDraws))
		case o.Other:
			out = append(out, fmt.Sprintf("onset: %s = %d showed another change on further draw %d of %d: a class of its own", dim, o.Value, o.Draws, pinDraws))
		default:
			out = append(out, fmt.Sprintf("onset: %s = %d showed no change on %d further draws", dim, o.Value, o.Draws))
		}
	}
	return out
}
