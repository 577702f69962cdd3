package power

import (
	"fmt"
	"math"
	"slices"

	"github.com/bitparity/bitparity/oracle"
)

// PrefillCheck tells which alternatives of an attn_prefill family one row
// (sequence s, query position p, head h) shows while the row's query
// q[s][p][h] changes. The family is DecodeSchedules (NewFamily at the
// sequence length), each applied to the row's own KV range, tokens 0..p:
// under (tile, splits) the row is oracle.Decode of its query over those
// p+1 tokens (one split: bitwise oracle.Prefill's row; more: a split-KV
// prefill, each query's causal range cut as flash-decoding cuts a cache).
//
// The query is read by this row alone (K[0..p] and V[0..p] are every
// later position's too), so a search may move it freely: Query is the
// check's own copy, and every call of Col or Shows reads it as it is.
// An alternative whose split bounds and tile at p+1 tokens are the
// declared schedule's (decodeKey) cannot show and is not computed: a row
// before position 16 shows none (tiles of 16 or more cover it whole).
type PrefillCheck struct {
	f   *Family
	out oracle.DType
	in  oracle.DecodeInput // one head: the row's query, its KV head's tokens 0..p
	// ss is the declared schedule, then one schedule of each group of
	// alternatives that run the same operations at p+1 tokens; alts[i]
	// is the group of ss[i+1] (indices into f.Alts).
	ss       []oracle.AttentionSchedule
	alts     [][]int
	distinct Set
}

// NewPrefillCheck starts a check of row r of in (((s·SeqLen)+p)·Heads+h,
// as oracle.PrefillInput.Rows numbers them) against the family, output
// rounded to out. It copies what it reads: in does not change under it.
func (f *Family) NewPrefillCheck(in oracle.PrefillInput, r int, out oracle.DType) (*PrefillCheck, error) {
	d, ok := f.Declared.(oracle.AttentionSchedule)
	if !ok {
		return nil, fmt.Errorf("power: prefill check of a %s family", f.Op)
	}
	D, H, KH := in.HeadDim, in.Heads, in.KVHeads
	if H < 1 || KH < 1 || D < 1 || H%KH != 0 || in.SeqLen < 1 || r < 0 || r >= in.Rows() ||
		len(in.Q) != in.Rows()*D || len(in.K) != in.Seqs*in.SeqLen*KH*D || len(in.V) != len(in.K) {
		return nil, fmt.Errorf("power: prefill row %d of %d sequences x %d positions x %d heads (kv heads %d, head dim %d): %w",
			r, in.Seqs, in.SeqLen, H, KH, D, oracle.ErrShape)
	}
	h, p, s := r%H, (r/H)%in.SeqLen, r/H/in.SeqLen
	kvh := h / (H / KH)
	L := p + 1
	k, v := make([]float32, L*D), make([]float32, L*D)
	for j := range L {
		off := ((s*in.SeqLen+j)*KH + kvh) * D
		copy(k[j*D:(j+1)*D], in.K[off:off+D])
		copy(v[j*D:(j+1)*D], in.V[off:off+D])
	}
	c := &PrefillCheck{f: f, out: out}
	c.in = oracle.DecodeInput{Q: append([]float32(nil), in.Q[r*D:(r+1)*D]...), K: [][]float32{k}, V: [][]float32{v},
		Heads: 1, KVHeads: 1, HeadDim: D, Out: oracle.FP32}
	c.ss, c.alts, c.distinct = f.groupsAt(d, L)
	return c, nil
}

// AtLength is the alternatives of an attention family that can show in a
// row of KV length L (an attn_prefill query at position L-1, a decode
// request of L tokens): those whose split bounds and tile at L are not
// the declared schedule's (decodeKey). A prefill row's power is the share
// of these it shows.
func (f *Family) AtLength(L int) Set {
	_, _, s := f.groupsAt(f.Declared.(oracle.AttentionSchedule), L)
	return s
}

// groupsAt groups the alternatives by the operations they run at KV
// length L: ss is d, then one schedule of each group that is not d's;
// alts[i] is the group of ss[i+1]; distinct is their union.
func (f *Family) groupsAt(d oracle.AttentionSchedule, L int) (ss []oracle.AttentionSchedule, alts [][]int, distinct Set) {
	ss, distinct = []oracle.AttentionSchedule{d}, NewSet(len(f.Alts))
	group := map[string]int{decodeKey(d, L): -1}
	for a, alt := range f.Alts {
		key := decodeKey(alt.(oracle.AttentionSchedule), L)
		g, ok := group[key]
		if g < 0 {
			continue // the declared schedule's operations at this length
		}
		if !ok {
			g = len(alts)
			group[key] = g
			ss = append(ss, alt.(oracle.AttentionSchedule))
			alts = append(alts, nil)
		}
		alts[g] = append(alts[g], a)
		distinct.Add(a)
	}
	return ss, alts, distinct
}

// Query is the row's query (HeadDim values), which the caller may change
// between calls.
func (c *PrefillCheck) Query() []float32 { return c.in.Q }

// Distinct is the alternatives that can show in this row: those that do
// not run the declared schedule's operations at its KV length.
func (c *PrefillCheck) Distinct() Set { return c.distinct }

// Row returns the row's fp32 output under the declared schedule at the
// query as it is now (oracle.NewDecodeProbe's start: KV length x head dim
// fmas for the scores, as many for the weighted sum).
func (c *PrefillCheck) Row() ([]float32, error) {
	p, err := oracle.NewDecodeProbe(c.in, c.ss[0], 0)
	if err != nil {
		return nil, fmt.Errorf("power: prefill row: %w", err)
	}
	return p.Start(), nil
}

// Shows returns the alternatives the row shows at the query as it is now:
// a is in the set when some output column, rounded to out, has other bits
// under f.Alts[a] than under the declared schedule. It costs one decode of
// the row per group of alternatives (oracle.NewDecodeProbes: the scores
// once).
func (c *PrefillCheck) Shows() (Set, error) {
	s := NewSet(len(c.f.Alts))
	if len(c.alts) == 0 {
		return s, nil
	}
	ps, err := oracle.NewDecodeProbes(c.in, c.ss, 0)
	if err != nil {
		return nil, fmt.Errorf("power: prefill row: %w", err)
	}
	ref := ps[0].Start()
	for g, p := range ps[1:] {
		y := p.Start()
		for d := range y {
			if math.Float32bits(oracle.Round(c.out, y[d])) != math.Float32bits(oracle.Round(c.out, ref[d])) {
				for _, a := range c.alts[g] {
					s.Add(a)
				}
				break
			}
		}
	}
	return s, nil
}

// Prefill returns the alternatives that row r of in shows
// (NewPrefillCheck's Shows).
func (f *Family) Prefill(in oracle.PrefillInput, r int, out oracle.DType) (Set, error) {
	c, err := f.NewPrefillCheck(in, r, out)
	if err != nil {
		return nil, err
	}
	return c.Shows()
}

// Slopes returns, for each value c of the row's query, the derivative of
// the row's output column col under the declared schedule with respect
// to q[c], in float64 at the query as it is now: with scores s_j =
// scale·q·k_j, weights w_j = exp(s_j - max)/Σ exp(s - max) and o =
// Σ w_j·v_j[col],
//
//	do/dq[c] = scale · Σ_j w_j·(v_j[col] - o)·k_j[c]
//
// A search tunes the query on the values of the largest |slope| (one
// fp32 evaluation of the row is KV length x head dim fmas twice; the
// slopes cost one such pass).
func (c *PrefillCheck) Slopes(col int) []float64 {
	D := c.in.HeadDim
	q, k, v := c.in.Q, c.in.K[0], c.in.V[0]
	L := len(k) / D
	scale := 1 / math.Sqrt(float64(D))
	s := make([]float64, L)
	mx := math.Inf(-1)
	for j := range s {
		for d, x := range q {
			s[j] += float64(x) * float64(k[j*D+d])
		}
		s[j] *= scale
		mx = math.Max(mx, s[j])
	}
	sum, o := 0.0, 0.0
	for j := range s {
		s[j] = math.Exp(s[j] - mx)
		sum += s[j]
		o += s[j] * float64(v[j*D+col])
	}
	o /= sum
	g := make([]float64, D)
	for j := range s {
		w := s[j] / sum * (float64(v[j*D+col]) - o) * scale
		for d := range g {
			g[d] += w * float64(k[j*D+d])
		}
	}
	return g
}

// Key returns token j's key (HeadDim values, j in 0..the row's position),
// as the row reads it. The caller must not change it.
func (c *PrefillCheck) Key(j int) []float32 {
	D := c.in.HeadDim
	return c.in.K[0][j*D : (j+1)*D]
}

// Edges returns, ascending, the tokens j > 0 at which some alternative of
// set s (indices into the family's Alts) starts a tile or a split of the
// row's KV range 0..p and the declared schedule starts none: a max of
// the scores at such a token makes the alternative's running max grow
// where the declared one's does not (attendRange: alpha != 1), which is
// what a tile alternative needs to change the row's bits.
func (c *PrefillCheck) Edges(s Set) []int {
	L := len(c.in.K[0]) / c.in.HeadDim
	declared := tileStarts(c.ss[0], L)
	var out []int
	for a, alt := range c.f.Alts {
		if !s.Has(a) {
			continue
		}
		for j := range tileStarts(alt.(oracle.AttentionSchedule), L) {
			if j > 0 && !declared[j] && !slices.Contains(out, j) {
				out = append(out, j)
			}
		}
	}
	slices.Sort(out)
	return out
}

// tileStarts is the tokens at which schedule s starts a tile on a KV range
// of L tokens: each split's bounds lo, lo+Tile, ... below its hi.
func tileStarts(s oracle.AttentionSchedule, L int) map[int]bool {
	starts := map[int]bool{}
	for _, b := range oracle.SplitBounds(L, s.Tile, s.Splits) {
		for j := b[0]; j < b[1]; j += s.Tile {
			starts[j] = true
		}
	}
	return starts
}

// Len is the row's KV length: its query position + 1.
func (c *PrefillCheck) Len() int { return len(c.in.K[0]) / c.in.HeadDim }

// Rows returns the row's fp32 output at the query as it is now under the
// declared schedule, then under one schedule of each group of
// alternatives that holds an alternative of s (groups in family order):
// a search reads from them the columns, and the direction, in which those
// alternatives move the row. It costs what Shows does.
func (c *PrefillCheck) Rows(s Set) ([][]float32, error) {
	ss := []oracle.AttentionSchedule{c.ss[0]}
	for g, alts := range c.alts {
		if slices.ContainsFunc(alts, s.Has) {
			ss = append(ss, c.ss[g+1])
		}
	}
	ps, err := oracle.NewDecodeProbes(c.in, ss, 0)
	if err != nil {
		return nil, fmt.Errorf("power: prefill row: %w", err)
	}
	rows := make([][]float32, len(ps))
	for i, p := range ps {
		rows[i] = p.Start()
	}
	return rows, nil
}
