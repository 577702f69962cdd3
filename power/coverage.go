package power

import (
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/spec"
)

// Coverage is, for each position of a scan's batches (the item at that
// position), the alternatives of a family that the position's row shows
// in at least one draw: the OR of its rows' sets over the draws.
type Coverage struct {
	Family *Family
	Draws  int
	pos    []Set
}

// NewCoverage returns an empty coverage of positions 0..positions-1.
func NewCoverage(f *Family, positions int) *Coverage {
	c := &Coverage{Family: f, pos: make([]Set, positions)}
	for i := range c.pos {
		c.pos[i] = NewSet(len(f.Alts))
	}
	return c
}

// AddDraw adds one draw: rows[i] is the set of the row at position i.
func (c *Coverage) AddDraw(rows []Set) error {
	if len(rows) != len(c.pos) {
		return fmt.Errorf("power: a draw of %d rows for %d positions", len(rows), len(c.pos))
	}
	for i, s := range rows {
		c.pos[i].Or(s)
	}
	c.Draws++
	return nil
}

// Clone returns a copy of c that later draws added to c do not change.
func (c *Coverage) Clone() *Coverage {
	d := &Coverage{Family: c.Family, Draws: c.Draws, pos: make([]Set, len(c.pos))}
	for i, s := range c.pos {
		d.pos[i] = slices.Clone(s)
	}
	return d
}

// Shows reports whether position i shows alternative a in some draw.
func (c *Coverage) Shows(i, a int) bool { return c.pos[i].Has(a) }

// At is the share of the family position i shows.
func (c *Coverage) At(i int) float64 {
	if len(c.Family.Alts) == 0 {
		return 1
	}
	return float64(c.pos[i].Len()) / float64(len(c.Family.Alts))
}

// Summary is the coverage in a certificate's words (spec.Power): the
// family's size, the alternatives no position shows (Never), the least
// and mean share of the family a position shows, the positions that show
// all of it, and whether the least share reaches target.
func (c *Coverage) Summary(target float64) spec.Power {
	p := spec.Power{Target: target, Family: len(c.Family.Alts), Cols: c.Family.Cols, Positions: len(c.pos), Draws: c.Draws, Min: 1}
	if len(c.pos) == 0 {
		p.Met = p.Min >= target
		return p
	}
	shown := Shown(len(c.Family.Alts), c.pos...)
	p.Never = p.Family - shown.Len()
	sum := 0.0
	for i := range c.pos {
		s := c.At(i)
		sum += s
		p.Min = min(p.Min, s)
		if c.pos[i].Len() == p.Family {
			p.Full++
		}
	}
	p.Mean = sum / float64(len(c.pos))
	p.Met = p.Min >= target
	return p
}
