package fuzz

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// MapDraws is the number of random normal draws a finding's drift map
// uses beside the finding's own data.
const MapDraws = 1

// MapDrift maps the dimension that decides finding f's drift (SweepFor)
// over SweepValues around its onset
// over 1+MapDraws input draws: the finding's own data (SweepFor's
// classifier), then MapDraws draws of the same case with normal values
// from seeds derived from the case's (RandomDraw), each classified by the
// draw's most sensitive item (witnessClass; path parity: SweepFor's KV
// classifier on the new draw). A value's class is the tuple of its bits over the
// draws (driftmap.SweepDraws), so the map is never coarser than what
// random data shows: a finding drawn with constant rows, whose sums are
// exact in every order, no longer maps as "every rows -> A". It returns
// nil and no error when the relation has no dimension to sweep. The
// targets are given as to Check.
func MapDrift(ctx context.Context, f *spec.Finding, given ...target.Target) (*spec.DriftMap, error) {
	ts, err := resolve(f.Case.Targets, given)
	if err != nil {
		return nil, err
	}
	sw, err := SweepFor(ctx, f, ts...)
	if err != nil || sw == nil {
		return nil, err
	}
	values := SweepValues(sw.Dim, sw.Onset)
	classify := []func(int) (string, error){sw.Classify}
	for k := 1; k <= MapDraws; k++ {
		g := *f
		g.Case = RandomDraw(f.Case, uint64(k))
		if f.Case.Relation == spec.RelPathParity {
			s, err := SweepFor(ctx, &g, ts...)
			if err != nil {
				return nil, fmt.Errorf("drift map, random draw %d: %w", k, err)
			}
			classify = append(classify, s.Classify)
			continue
		}
		w, err := newWitnessClass(ctx, ts[0], g.Case, values)
		if err != nil {
			return nil, fmt.Errorf("drift map, random draw %d: %w", k, err)
		}
		classify = append(classify, w.classify)
	}
	return driftmap.SweepDraws(ctx, sw.Dim, values, classify)
}

// witnessClass classifies a batch size v on a random draw the way
// SweepFor classifies the finding's own data, by the bits (outputs and
// fp32 taps) of one watched item in a batch of v copies of itself, but the
// watched item is chosen among the draw's first items as the one whose
// bits change most over the swept values when it sits in a batch of
// distinct items (the first v of one batch): a reduction order change
// shows in an item's bits only where one of its sums is not exact in both
// orders, so the item that shows the most classes is the draw's best
// witness. A draw where no item changes watches item 0, which then
// classifies every value alike and splits nothing.
type witnessClass struct {
	ctx     context.Context
	t       target.Target
	witness *target.Batch // the watched item alone
}

// witnessItems bounds the items of a draw searched for a witness.
const witnessItems = 32

func newWitnessClass(ctx context.Context, t target.Target, c spec.Case, values []int) (*witnessClass, error) {
	n := min(witnessItems, max(values[len(values)-1], caseItems(c)))
	big, err := Inputs(withItems(c, n))
	if err != nil {
		return nil, fmt.Errorf("a batch of %d items: %w", n, err)
	}
	seen := make([]map[string]bool, n)
	for i := range seen {
		seen[i] = map[string]bool{}
	}
	for _, v := range values {
		if v > n {
			break
		}
		ds, err := itemDigests(ctx, t, big, identity(v))
		if err != nil {
			return nil, err
		}
		for i, d := range ds {
			seen[i][d] = true
		}
	}
	best := 0
	for i := range seen {
		if len(seen[i]) > len(seen[best]) {
			best = i
		}
	}
	w, err := gather(big, []int{best})
	if err != nil {
		return nil, err
	}
	return &witnessClass{ctx: ctx, t: t, witness: w}, nil
}

// itemDigests runs t on items ids of b and returns the digest of each
// item's rows.
func itemDigests(ctx context.Context, t target.Target, b *target.Batch, ids []int) ([]string, error) {
	g, err := gather(b, ids)
	if err != nil {
		return nil, err
	}
	out, err := t.Run(ctx, g, nil)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	if err := out.ToHost(); err != nil {
		return nil, err
	}
	k := g.RowsPerItem()
	ds := make([]string, len(ids))
	for i := range ids {
		ds[i] = digest(slice(out, i*k, (i+1)*k))
	}
	return ds, nil
}

func (w *witnessClass) classify(v int) (string, error) {
	if v < 1 {
		return "", fmt.Errorf("drift map: batch of %d", v)
	}
	ds, err := itemDigests(w.ctx, w.t, w.witness, make([]int, v))
	if err != nil {
		return "", err
	}
	return ds[0], nil
}

// slice returns the host output of positions [lo, hi) of o.
func slice(o *target.Output, lo, hi int) *target.Output {
	s := &target.Output{Rows: o.Rows[lo:hi], Cols: o.Cols, DType: o.DType, Values: o.Values[lo*o.Cols : hi*o.Cols], TapCols: o.TapCols}
	if o.Taps != nil {
		s.Taps = o.Taps[lo*o.TapCols : hi*o.TapCols]
	}
	return s
}

// RandomDraw returns case c with generated normal values instead of its
// own: no explicit data, dist normal, seed splitmix(c.Seed ^ k·golden),
// this build's generator. The shape, dtypes and relation parameters stay.
func RandomDraw(c spec.Case, k uint64) spec.Case {
	c.Data = nil
	c.Dist = spec.DistNormal
	c.Seed = splitmix(c.Seed ^ k*0x9e3779b97f4a7c15)
	c.GenVersion = spec.GeneratorVersion
	return c
}
