package power

import (
	"fmt"
	"math"

	"github.com/bitparity/bitparity/oracle"
)

// DecodeTiles is the KV tile sizes of attn_decode's family: the tiles a
// flash-decoding kernel is built with (powers of two 16..256, and 48).
var DecodeTiles = []int{16, 32, 48, 64, 128, 256}

// DecodeSplits is the most splits of attn_decode's family: num_splits
// 1..DecodeSplits, combined by the oracle's log-sum-exp in split order.
const DecodeSplits = 32

// DecodeSchedules is attn_decode's schedules, in the order a family lists
// them:
//
//	tile DecodeTiles x splits 1..DecodeSplits                     (192)
//
// The one place this family is decided: a decode family (NewFamily) is it
// without the schedules that run the same operations at the family's KV
// length.
func DecodeSchedules() []oracle.AttentionSchedule {
	var out []oracle.AttentionSchedule
	for _, t := range DecodeTiles {
		for s := 1; s <= DecodeSplits; s++ {
			out = append(out, oracle.AttentionSchedule{Tile: t, Splits: s})
		}
	}
	return out
}

// decodeKey is equal for two decode schedules that run the same
// operations on a KV cache of L tokens: the split bounds, and the tile
// capped at the longest split (a tile that covers a whole split is one
// tile, whatever its size), as explain's orderKey keys them.
func decodeKey(s oracle.AttentionSchedule, L int) string {
	bounds := oracle.SplitBounds(L, s.Tile, s.Splits)
	longest := 0
	for _, b := range bounds {
		longest = max(longest, b[1]-b[0])
	}
	return fmt.Sprintf("%v/%d", bounds, min(s.Tile, longest))
}

// DecodeCheck tells which alternatives of an attn_decode family one row
// (one request's query, one head) shows while values of the request's V
// cache change (a search over a knob's values). It keeps one
// oracle.DecodeProbe per schedule (oracle.NewDecodeProbes: the row's
// scores computed once), whose softmax weights depend on q and K only, and the bits of each output column under each schedule: a
// change of one V value costs each schedule one column (L fmas); a value
// of another KV head costs nothing.
type DecodeCheck struct {
	f      *Family
	out    oracle.DType
	v      []float32 // the request's V cache, which SetV writes
	decl   *oracle.DecodeProbe
	probes []*oracle.DecodeProbe // alternative a's
	stride int                   // KVHeads·HeadDim
	off    int                   // the row's KV head's offset in a token
	dim    int
	ref    []uint32 // declared column bits, rounded to out
	diff   [][]bool // diff[a][d]: column d differs under alternative a
}

// NewDecodeCheck starts a check of row r (head r%Heads of request
// r/Heads) of in against the family, output rounded to out. The check
// reads in.V[r/Heads] at every call and writes it in SetV; the caller
// must not change it otherwise, nor Q or K.
func (f *Family) NewDecodeCheck(in oracle.DecodeInput, r int, out oracle.DType) (*DecodeCheck, error) {
	d, ok := f.Declared.(oracle.AttentionSchedule)
	if !ok {
		return nil, fmt.Errorf("power: decode check of a %s family", f.Op)
	}
	in.Out = oracle.FP32
	ss := []oracle.AttentionSchedule{d}
	for _, alt := range f.Alts {
		ss = append(ss, alt.(oracle.AttentionSchedule))
	}
	ps, err := oracle.NewDecodeProbes(in, ss, r)
	if err != nil {
		return nil, fmt.Errorf("power: decode row %d: %w", r, err)
	}
	c := &DecodeCheck{f: f, out: out, decl: ps[0], probes: ps[1:]}
	H, D := in.Heads, in.HeadDim
	c.v, c.stride, c.off, c.dim = in.V[r/H], in.KVHeads*D, (r%H)/(H/in.KVHeads)*D, D
	c.ref = make([]uint32, D)
	c.diff = make([][]bool, len(f.Alts))
	for a := range c.diff {
		c.diff[a] = make([]bool, D)
	}
	ref := c.decl.Start()
	for col := range D {
		c.ref[col] = math.Float32bits(oracle.Round(out, ref[col]))
	}
	for a, p := range c.probes {
		y := p.Start()
		for col := range D {
			c.diff[a][col] = math.Float32bits(oracle.Round(out, y[col])) != c.ref[col]
		}
	}
	return c, nil
}

// column recomputes output column col under every schedule.
func (c *DecodeCheck) column(col int) {
	c.ref[col] = math.Float32bits(oracle.Round(c.out, c.decl.Col(col)))
	for a, p := range c.probes {
		c.diff[a][col] = math.Float32bits(oracle.Round(c.out, p.Col(col))) != c.ref[col]
	}
}

// SetV stores v in the request's V cache at index i (token i/stride,
// KV head and column i%stride) and recomputes the column it feeds.
func (c *DecodeCheck) SetV(i int, v float32) {
	c.v[i] = v
	c.Changed(i)
}

// Changed recomputes what V index i feeds after the caller (or another
// check of the same request) wrote it.
func (c *DecodeCheck) Changed(i int) {
	if col := i%c.stride - c.off; col >= 0 && col < c.dim {
		c.column(col)
	}
}

// Shows returns the alternatives the row shows now: those under which
// some output column has other bits.
func (c *DecodeCheck) Shows() Set {
	s := NewSet(len(c.probes))
	for a, cols := range c.diff {
		for _, d := range cols {
			if d {
				s.Add(a)
				break
			}
		}
	}
	return s
}

// Decode returns the alternatives that row r of in shows (head r%Heads
// of request r/Heads): a is in the set when some output of the row,
// rounded to out, has other bits under f.Alts[a] than under f.Declared
// (oracle.Decode of the row under each: |Alts|+1 decodes of one row).
func (f *Family) Decode(in oracle.DecodeInput, r int, out oracle.DType) (Set, error) {
	d, ok := f.Declared.(oracle.AttentionSchedule)
	if !ok {
		return nil, fmt.Errorf("power: decode check of a %s family", f.Op)
	}
	in.Out = out
	rows := []int{r}
	ref, err := oracle.Decode(in, d, rows)
	if err != nil {
		return nil, fmt.Errorf("power: decode %s: %w", d, err)
	}
	s := NewSet(len(f.Alts))
	for a, alt := range f.Alts {
		y, err := oracle.Decode(in, alt.(oracle.AttentionSchedule), rows)
		if err != nil {
			return nil, fmt.Errorf("power: decode %s: %w", alt, err)
		}
		for d := range y {
			if math.Float32bits(y[d]) != math.Float32bits(ref[d]) {
				s.Add(a)
				break
			}
		}
	}
	return s, nil
}
