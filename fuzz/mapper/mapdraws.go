package mapper

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// mapDraws is the number of random normal draws a finding's drift map
// uses beside the finding's own data.
const mapDraws = 2

// Map maps each dimension finding f's relation varies (sweepsFor)
// over 1+mapDraws input draws: the finding's own data, then mapDraws draws
// of the same case with normal values from seeds derived from the case's
// (randomDraw), the items classified by a panel of panelItems distinct
// items (panelClass), every other dimension by its own classifier on the
// new draw. A value's class is the tuple of its bits over the draws
// (driftmap.SweepDraws), so the map is never coarser than what random data
// shows: a finding drawn with constant rows, whose sums are exact in every
// order, no longer maps as "every rows -> A". Every value runs twice
// (values whose runs differ are nondeterministic), gaps between classes
// are bisected, and a periodic rule is checked up to the largest value the
// campaign reached (f.Original).
//
// The map returned is the first dimension that splits (more than one
// class), with the others in its Also; when none splits, the first one
// swept, with the others. When none splits and the finding is a mismatch
// of batch invariance or padding, the prefixes of its batch are swept
// too (locate.go): that map comes first when it splits, with a note of
// the positions that differ, else last, saying the onset was not located. It returns nil and no error when the relation
// has no dimension to sweep; when a dimension after the first cannot be
// mapped (the time is up), the maps made so far come back with the error.
func Map(ctx context.Context, f *spec.Finding, given ...target.Target) (*spec.DriftMap, error) {
	ts, sws, err := resolvedSweeps(ctx, f, given)
	if err != nil || len(sws) == 0 {
		return nil, err
	}
	draws := make([][]*Sweep, mapDraws)
	for k := range draws {
		g := *f
		g.Case = randomDraw(f.Case, uint64(k+1))
		if draws[k], err = sweepsFor(ctx, &g, ts); err != nil {
			return nil, fmt.Errorf("drift map, random draw %d: %w", k+1, err)
		}
	}
	var maps []spec.DriftMap
	for i, sw := range sws {
		values := sw.Values
		if values == nil {
			values = sweepValues(sw.Dim, sw.Onset)
		}
		classify := []func(int) (string, error){sw.Classify}
		for k := range draws {
			if !sw.panel {
				classify = append(classify, draws[k][i].Classify)
				continue
			}
			pc, err := panelDraw(ctx, ts[0], f.Case, k+1)
			if err != nil {
				return nil, fmt.Errorf("drift map, random draw %d: %w", k+1, err)
			}
			p, err := newPanelClass(ctx, ts[0], pc, max(slices.Max(values), sw.Far))
			if err != nil {
				return nil, fmt.Errorf("drift map, random draw %d: %w", k+1, err)
			}
			if f.Kind == spec.KindCrash {
				classify = append(classify, crashClass(p.classify))
			} else {
				classify = append(classify, orCrash(p.classify))
			}
		}
		opts := driftmap.Options{Far: sw.Far, Determinism: sw.determinism}
		m, err := opts.SweepDraws(ctx, sw.Dim, values, classify)
		if err != nil {
			if len(maps) == 0 {
				return nil, err
			}
			return arrange(maps), err
		}
		m.At = sw.At
		maps = append(maps, *m)
	}
	if !slices.ContainsFunc(maps, func(m spec.DriftMap) bool { return m.Splits() }) && locates(f) {
		return located(ctx, f, ts[0], maps)
	}
	return arrange(maps), nil
}

// located is the map of finding f whose own sweeps (maps) do not split,
// with the sweep of its batch's prefixes (locate.go): first when it
// splits, else after them, saying what it could not locate.
func located(ctx context.Context, f *spec.Finding, t target.Target, maps []spec.DriftMap) (*spec.DriftMap, error) {
	top := max(f.Case.BatchRows(), f.Case.Rel.Batch, f.Case.Rel.Pad)
	if f.Original != nil {
		top = max(top, f.Original.BatchRows(), f.Original.Rel.Batch, f.Original.Rel.Pad)
	}
	sw, l, err := locateSweep(ctx, f, t, top)
	if err != nil || sw == nil {
		return arrange(maps), err
	}
	m, err := driftmap.Options{}.Sweep(ctx, sw.Dim, sw.Values, sw.Classify)
	if err != nil {
		return arrange(maps), err
	}
	if m, err = l.pin(ctx, f.Case, m); err != nil {
		return arrange(maps), err
	}
	m.At, m.Draws = sw.At, len(l.draws)
	m.Note = l.note(m, len(l.draws))
	if m.Splits() {
		return arrange(append([]spec.DriftMap{*m}, maps...)), nil
	}
	return arrange(append(maps, *m)), nil
}

// arrange returns the first of maps that splits, else the first, with the
// others in its Also in their order.
func arrange(maps []spec.DriftMap) *spec.DriftMap {
	first := 0
	for i := range maps {
		if maps[i].Splits() {
			first = i
			break
		}
	}
	m := maps[first]
	for i := range maps {
		if i != first {
			m.Also = append(m.Also, maps[i])
		}
	}
	return &m
}

// panelItems is the number of distinct items a random draw of a drift map
// watches (panelClass).
const panelItems = 64

// panelClass classifies a batch size v on a random draw by the bits of a
// panel of panelItems distinct items computed in batches of v items: one
// batch of v items holding the panel cyclically when v >= panelItems,
// else ceil(panelItems/v) batches of v panel items. The class is the digest
// of every panel item's output and tap bits (from its first batch), a
// function of the schedule the target chooses for v items only, so
// refining by it never splits a class that the draws agree on; and with
// panelItems witnesses one draw shows a reduction-order change that one
// watched item shows only near a rounding boundary (at hidden 256 in bf16,
// in about one row in five).
//
// The batches of v >= panelItems items are the first v items of one batch
// of the panel repeated up to top items, the largest v the sweep is expected
// to reach (grown).
type panelClass struct {
	ctx    context.Context
	c      spec.Case
	t      target.Target
	panel  *target.Batch
	cyclic *grown
}

func newPanelClass(ctx context.Context, t target.Target, c spec.Case, top int) (*panelClass, error) {
	panel, err := inputs.Of(inputs.WithItems(c, panelItems))
	if err != nil {
		return nil, fmt.Errorf("a panel of %d items: %w", panelItems, err)
	}
	cyclic := &grown{top: top, values: panel.ItemValues(), build: func(n int) (*target.Batch, error) {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i % panelItems
		}
		return inputs.View(panel, ids)
	}}
	return &panelClass{ctx: ctx, c: c, t: t, panel: panel, cyclic: cyclic}, nil
}

func (p *panelClass) classify(v int) (string, error) {
	if v < 1 {
		return "", fmt.Errorf("a batch of %d items", v)
	}
	if err := inputs.Budget(p.c, v*p.panel.ItemValues()); err != nil {
		return "", err
	}
	k := p.panel.RowsPerItem()
	bits := make([]string, panelItems)
	for first := 0; first < panelItems; first += v {
		b, err := p.batch(first, v)
		if err != nil {
			return "", err
		}
		n := min(v, panelItems) // the batch's first n items are panel items first..first+n-1
		out, err := hostRun(p.ctx, p.t, b, inputs.ItemRows(b, 0, n))
		if err != nil {
			return "", err
		}
		for i := 0; i < n && first+i < panelItems; i++ {
			bits[first+i] = digest(slice(out, i*k, (i+1)*k))
		}
	}
	return driftmap.Label(strings.Join(bits, "\x00")), nil
}

// batch returns the batch of v panel items from item first on, cyclically.
func (p *panelClass) batch(first, v int) (*target.Batch, error) {
	if first == 0 && v >= panelItems {
		return p.cyclic.first(v)
	}
	ids := make([]int, v)
	for i := range ids {
		ids[i] = (first + i) % panelItems
	}
	return inputs.View(p.panel, ids)
}

// slice returns the host output of positions [lo, hi) of o.
func slice(o *target.Output, lo, hi int) *target.Output {
	s := &target.Output{Rows: o.Rows[lo:hi], Cols: o.Cols, DType: o.DType, Values: o.Values[lo*o.Cols : hi*o.Cols], TapCols: o.TapCols}
	if o.Taps != nil {
		s.Taps = o.Taps[lo*o.TapCols : hi*o.TapCols]
	}
	return s
}

// panelDraw returns the case of random draw k (1..mapDraws) of a drift
// map's panel (panelClass) on target t: randomDraw(c, k), except that
// draw 1 is sensitive (the first of a chain, fuzz/inputs/sensitive.go) when c's
// op has a sensitive draw (inputs.SensitiveOps) and t shows its outputs only (no
// fp32 taps: a GPU kernel, a process, a user's kernel; one item is run to
// see). Each of its panelItems items then shows (nearly) every reduction
// order of the op's family in its output bits, so a batch size whose
// schedule differs from its neighbour's changes the panel's bits and the
// items sweep's onset is exact; where the taps show every order change,
// a normal draw does as well and costs microseconds a row where a
// sensitive row costs milliseconds (docs/detection.md).
func panelDraw(ctx context.Context, t target.Target, c spec.Case, k int) (spec.Case, error) {
	d := randomDraw(c, uint64(k))
	if k != 1 || !slices.Contains(inputs.SensitiveOps, c.Op) {
		return d, nil
	}
	b, err := inputs.Of(inputs.WithItems(d, 1))
	if err != nil {
		return d, err
	}
	out, err := hostRun(ctx, t, b, inputs.ItemRows(b, 0, 1))
	if err != nil {
		return d, nil // the panel's own runs say how the target fails
	}
	if out.TapCols == 0 {
		d.Dist = spec.DistSensitive
	}
	return d, nil
}

// randomDraw returns case c with generated normal values instead of its
// own: no explicit data, dist normal, seed inputs.Splitmix(c.Seed ^ k·golden),
// this build's generator. The shape, dtypes and relation parameters stay.
func randomDraw(c spec.Case, k uint64) spec.Case {
	c.Data = nil
	c.Dist = spec.DistNormal
	c.Seed = inputs.Splitmix(c.Seed ^ k*0x9e3779b97f4a7c15)
	c.GenVersion = spec.GeneratorVersion
	return c
}
