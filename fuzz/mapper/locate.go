package mapper

import (
	"context"
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// A map must not say that no dimension splits while its own minimal case
// shows a drift. The sweeps of the relation's dimensions (sweepsFor)
// watch one item, or a panel of items at positions 0..63, in batches of
// v: a drift that a row shows only at some positions of a batch (the
// rows of a second wave, of the last partial tile, one row, the odd
// positions) is never at a watched position. When none of them splits,
// Map sweeps the batch the way a scan does (locateSweep): the batch
// of the case's first v items, each at its own position, every row
// compared with its item alone. Where that splits too, the map has the
// onset and a note of the positions that differ; where it does not, the
// map says what it could not locate.

// locate classifies a batch size v by whether a row of the batch of the
// first v items differs from its item alone, on the finding's own draw
// (when its values are generated) and mapDraws random draws.
type locate struct {
	ctx   context.Context
	t     target.Target
	draws []*target.Batch
	alone []map[int]string // per draw: item -> digest of its rows alone
	// moved[v] are the positions of the batch of v items that differed
	// from their items alone on any draw.
	moved map[int]driftmap.Positions
	// held are the values just below an onset that showed no change on
	// pinDraws further draws (pin).
	held []int
}

// locateSweep returns the sweep of the batches of finding f's first v
// items (v up to top) on target t, or nil when those batches would hold
// more than mapElements input values at any size up to 2.
func locateSweep(ctx context.Context, f *spec.Finding, t target.Target, top int) (*Sweep, *locate, error) {
	c := f.Case
	var cases []spec.Case
	if c.Data == nil {
		cases = append(cases, inputs.WithItems(c, top))
	}
	for k := range mapDraws {
		cases = append(cases, inputs.WithItems(randomDraw(c, uint64(k+1)), top))
	}
	l := &locate{ctx: ctx, t: t, moved: map[int]driftmap.Positions{}}
	for _, dc := range cases {
		b, err := inputs.Of(dc)
		if err != nil {
			return nil, nil, fmt.Errorf("drift map of prefixes: %w", err)
		}
		if spec.SatMul(b.Items(), b.ItemValues()) > mapElements {
			return nil, nil, nil
		}
		l.draws = append(l.draws, b)
		l.alone = append(l.alone, map[int]string{})
	}
	dim := c.Op.ItemsWord()
	sw := &Sweep{Dim: dim, Onset: max(c.BatchRows(), c.Rel.Batch, c.Rel.Pad), At: "prefixes of the case's batch, every row against its item alone",
		Classify: orCrash(l.classify)}
	for _, v := range sweepValues(dim, sw.Onset) {
		if v <= top {
			sw.Values = append(sw.Values, v)
		}
	}
	if !slices.Contains(sw.Values, top) {
		sw.Values = append(sw.Values, top)
	}
	return sw, l, nil
}

// classify returns "A" when every row of the batch of the first v items
// equals its item alone on every draw, else "B", and records the
// positions that differed.
func (l *locate) classify(v int) (string, error) {
	class := "A"
	for k, b := range l.draws {
		if v < 1 || v > b.Items() {
			return "", fmt.Errorf("drift map of prefixes: %d items of %d", v, b.Items())
		}
		g, err := inputs.Gather(b, spec.Iota(v))
		if err != nil {
			return "", err
		}
		out, err := hostRun(l.ctx, l.t, g, nil)
		if err != nil {
			return "", err
		}
		kr := b.RowsPerItem()
		var ps []int
		for it := range v {
			a, err := l.itemAlone(k, it)
			if err != nil {
				return "", err
			}
			if digest(slice(out, it*kr, (it+1)*kr)) == a {
				continue
			}
			class = "B"
			ps = append(ps, it)
		}
		all := l.moved[v]
		all.AddBatch(ps, v)
		l.moved[v] = all
	}
	return class, nil
}

// itemAlone is the digest of item it of draw k computed alone.
func (l *locate) itemAlone(k, it int) (string, error) {
	if d, ok := l.alone[k][it]; ok {
		return d, nil
	}
	g, err := inputs.Gather(l.draws[k], []int{it})
	if err != nil {
		return "", err
	}
	d, err := bits(l.ctx, l.t, g, nil)
	if err != nil {
		return "", err
	}
	l.alone[k][it] = d
	return d, nil
}

// pinDraws is how many further random draws pin tries a value on.
const pinDraws = 8

// pin moves the onset of class B of map m down through rows that could
// not show the change on the map's draws: while the value a just below
// B's first value is in class A, a's batch runs on up to pinDraws further
// random draws of case c, and a joins B when a row differs from its item
// alone there. It returns m swept again with the values it moved (the
// other values keep their classes), or m when none moved.
func (l *locate) pin(ctx context.Context, c spec.Case, m *spec.DriftMap) (*spec.DriftMap, error) {
	class := map[int]string{}
	for _, cl := range m.Classes {
		for _, v := range cl.Values {
			class[v] = cl.Label
		}
	}
	moved := false
	for _, cl := range m.Classes {
		if cl.Label != "B" {
			continue
		}
		for _, b := range cl.Values {
			a := b - 1
			for class[a] == "A" {
				shows, err := l.further(ctx, c, a)
				if err != nil {
					return nil, err
				}
				if !shows {
					l.held = append(l.held, a)
					break
				}
				class[a], moved = "B", true
				a--
			}
		}
	}
	if !moved {
		return m, nil
	}
	again, err := driftmap.Options{Runs: 1}.Sweep(ctx, m.Dim, m.Values, func(v int) (string, error) {
		if d, ok := class[v]; ok {
			return d, nil
		}
		return l.classify(v) // a value bisection adds
	})
	if err != nil {
		return nil, err
	}
	again.Runs = m.Runs // the classes are m's
	return again, nil
}

// further reports whether a row of the batch of the first a items
// differs from its item alone on one of pinDraws further draws of case c
// (new seeds; the case's distribution and normal values in turn),
// recording the positions that differ.
func (l *locate) further(ctx context.Context, c spec.Case, a int) (bool, error) {
	for e := range pinDraws {
		dc := randomDraw(c, uint64(mapDraws+1+e))
		if e%2 == 0 && c.Data == nil {
			dc.Dist = c.Dist // the case's own distribution (boundary values, say) every other draw
		}
		b, err := inputs.Of(inputs.WithItems(dc, a))
		if err != nil {
			return false, fmt.Errorf("drift map of prefixes, further draw %d: %w", e+1, err)
		}
		p := &locate{ctx: ctx, t: l.t, draws: []*target.Batch{b}, alone: []map[int]string{{}}, moved: l.moved}
		d, err := p.classify(a)
		if err != nil {
			return false, err
		}
		if d == "B" {
			return true, nil
		}
	}
	return false, nil
}

// note says which positions differed in the batches of class B of m, or,
// when m does not split, what could not be located.
func (l *locate) note(m *spec.DriftMap, draws int) string {
	for _, cl := range m.Classes {
		if cl.Label != "B" {
			continue
		}
		var sp driftmap.Positions
		for _, v := range cl.Values {
			sp.Merge(l.moved[v])
		}
		if !sp.Empty() {
			n := sp.Note(cl.Label)
			for _, a := range l.held {
				n += fmt.Sprintf("; %s = %d showed no change on %d further draws", m.Dim, a, pinDraws)
			}
			return n
		}
	}
	if m.Splits() {
		return ""
	}
	return fmt.Sprintf("the onset was not located: no batch of the case's first %d..%d %s has a row that differs from its item alone on %d draws, yet the finding's rows differ",
		m.From, m.To, m.Dim, draws)
}

// locates reports whether Map sweeps the prefixes of finding f's
// batch when no dimension of its relation splits: a mismatch of batch
// invariance or padding, the relations of a batch's composition, on one
// target.
func locates(f *spec.Finding) bool {
	return f.Kind == spec.KindMismatch && len(f.Case.Targets) == 1 &&
		(f.Case.Relation == spec.RelBatchInvariance || f.Case.Relation == spec.RelPadding)
}
