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
const MapDraws = 2

// MapDrift maps the dimension that decides finding f's drift (SweepFor)
// over SweepValues around its onset
// over 1+MapDraws input draws: the finding's own data (SweepFor's
// classifier), then MapDraws draws of the same case with normal values
// from seeds derived from the case's (RandomDraw), each classified by a
// batch of distinct items (prefixClass; path parity: SweepFor's KV
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
		p, err := newPrefixClass(ctx, ts[0], g.Case, values[len(values)-1])
		if err != nil {
			return nil, fmt.Errorf("drift map, random draw %d: %w", k, err)
		}
		classify = append(classify, p.classify)
	}
	return driftmap.SweepDraws(ctx, sw.Dim, values, classify)
}

// prefixClass classifies a batch size v on a random draw by a batch of v
// distinct items, the first v of one batch generated at the largest size
// swept: the class is the digest of item 0's bits and whether any item's
// bits (outputs and fp32 taps) differ from the same item computed alone.
// Every item of the batch is a witness, so one draw shows a reduction
// order change that a single watched item shows only near a rounding
// boundary (at hidden 256 in bf16, about one row in five).
type prefixClass struct {
	ctx   context.Context
	t     target.Target
	big   *target.Batch
	alone []string // digest of item i computed alone; "" until needed
}

func newPrefixClass(ctx context.Context, t target.Target, c spec.Case, maxV int) (*prefixClass, error) {
	big, err := Inputs(withItems(c, max(maxV, caseItems(c))))
	if err != nil {
		return nil, fmt.Errorf("a batch of %d items: %w", maxV, err)
	}
	return &prefixClass{ctx: ctx, t: t, big: big, alone: make([]string, big.Items())}, nil
}

// items runs t on items ids of p.big and returns the digest of each item's
// rows.
func (p *prefixClass) items(ids []int) ([]string, error) {
	b, err := gather(p.big, ids)
	if err != nil {
		return nil, err
	}
	out, err := p.t.Run(p.ctx, b, nil)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	if err := out.ToHost(); err != nil {
		return nil, err
	}
	k := b.RowsPerItem()
	ds := make([]string, len(ids))
	for i := range ids {
		ds[i] = digest(slice(out, i*k, (i+1)*k))
	}
	return ds, nil
}

func (p *prefixClass) classify(v int) (string, error) {
	if v < 1 || v > len(p.alone) {
		return "", fmt.Errorf("batch of %d items, the draw has %d", v, len(p.alone))
	}
	got, err := p.items(identity(v))
	if err != nil {
		return "", err
	}
	moved := false
	for i, d := range got {
		if p.alone[i] == "" {
			a, err := p.items([]int{i})
			if err != nil {
				return "", err
			}
			p.alone[i] = a[0]
		}
		moved = moved || d != p.alone[i]
	}
	return fmt.Sprintf("%s/%t", got[0], moved), nil
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
