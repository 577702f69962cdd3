package inputs

import (
	"errors"
	"math"
	"slices"

	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
)

// prefillSequence makes the rows of slot j of an attn_prefill case (a
// sequence, row key i = g.keys[j]) and returns the alternatives of the
// family each of its rows shows (row p·Heads + h: query position p, head
// h) and their union. Every row is made on its own query q[p][h], which
// no other row reads (K[0..p] and V[0..p] are every later position's
// too, and stay the normal draw's), so the rows are independent and each
// targets the whole family at its own KV length p+1
// (power.PrefillCheck.Distinct; a row before position 16 can show none
// and keeps its query). Of at most prefillAttempts candidates a row
// takes the one that shows the most (the first such; one that shows all
// it can stops the search):
//
//	candidate 0   the row's query of the normal draw (same seed)
//	candidate a   head h's values of the token's query re-drawn with
//	              row key (i<<32 | p) ^ a<<60
//
// each steered (steerQuery) so that its largest score falls on token
// edges[a % len(edges)], edges the tile and split starts of the
// alternatives the best candidate so far misses that the declared
// schedule lacks (power.PrefillCheck.Edges: there the alternative's
// running max grows and the declared one's does not), then tuned by
// tuneQuery on the output column and to the side of the midpoint that
// those alternatives move the row across (driftColumn; where they move
// no column, the side odd when i + seed + p + h is odd), then tried with
// its finest knob moved by each of knobVariants. A row's bits depend on
// (Seed, i, p, h) only; the chain's earlier draws do not steer it (the
// next draw's seed re-draws K and V). Its cost, for a row of KV length L
// and head dim D, a candidate: the steering (L dot products of D values),
// the row under each group of alternatives it misses once
// (power.PrefillCheck.Rows), about 15 evaluations of the declared row
// (2·L·D fmas each) for the tuning, and at most len(knobVariants) family
// checks (power.PrefillCheck.Shows: the scores once, then L exponentials
// and L·D fmas per group of alternatives), for at most prefillAttempts
// candidates.
func (g *sensitiveGen) prefillSequence(j int) (power.Set, []power.Set, error) {
	p := g.b.Input.(*oracle.PrefillInput)
	H, L := p.Heads, p.SeqLen
	i := uint64(g.keys[j])
	rows := make([]power.Set, L*H)
	errs := make([]error, L*H)
	eachRow(L*H, func(k int) {
		r := j*L*H + k
		pos, h := k/H, k%H
		odd := (i+g.c.Seed+uint64(pos)+uint64(h))%2 == 1
		rows[k], errs[k] = g.prefillRow(r, i, pos, h, odd)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return power.Shown(len(g.f.Alts), rows...), rows, nil
}

// prefillRow makes row r of g's prefill input (row key i, query position pos,
// head h; prefillSequence) and returns the alternatives it shows.
func (g *sensitiveGen) prefillRow(r int, i uint64, pos, h int, odd bool) (power.Set, error) {
	p := g.b.Input.(*oracle.PrefillInput)
	H, D := p.Heads, p.HeadDim
	c, err := g.f.NewPrefillCheck(*p, r, g.cmp)
	if err != nil {
		return nil, err
	}
	want := c.Distinct().Len()
	if want == 0 {
		return power.NewSet(len(g.f.Alts)), nil
	}
	q := c.Query()
	var best []float32
	var bestSet power.Set
	bestN := -1
	missing := c.Distinct()
	for a := range prefillAttempts {
		if a > 0 {
			qt := attnTensors(g.c)[0]
			tok, err := fill(g.c, qt.ID, qt.Dist, g.b.In, qt.Scale, 1, H*D, func(int) uint64 { return (i<<32 | uint64(pos)) ^ uint64(a)<<60 })
			if err != nil {
				return nil, err
			}
			copy(q, tok[h*D:(h+1)*D])
		}
		if edges := c.Edges(missing); len(edges) > 0 {
			steerQuery(c, g.b.In, edges[a%len(edges)], steerMargin)
		}
		col, dir, err := driftColumn(c, missing)
		if err != nil {
			return nil, err
		}
		knob, err := tuneQuery(c, g.b.In, g.cmp, col, dir, odd)
		if err != nil {
			return nil, err
		}
		x0 := q[knob]
		for _, step := range knobVariants {
			q[knob] = boundary.Step(g.b.In, x0, step)
			s, err := c.Shows()
			if err != nil {
				return nil, err
			}
			if n := s.Len(); n > bestN {
				best, bestSet, bestN = slices.Clone(q), s, n
				missing = c.Distinct().Minus(s)
			}
			if bestN == want {
				break
			}
		}
		if bestN == want {
			break
		}
	}
	copy(p.Q[r*D:(r+1)*D], best)
	return bestSet, nil
}

// tuneQuery moves the query of check c (values of dtype in) so that the
// row's fp32 output in column col, under the declared schedule, lands on
// the cmp midpoint target as boundary's tuners aim (odd: one fp32 ulp to
// the odd side of it), and returns the index of its finest knob. A
// direction dir != 0 (driftColumn: the way the alternatives move the
// column) sets the side so that such a move crosses the midpoint: the
// midpoint itself (which rounds to even) when dir points away from the
// even neighbour, the odd side when it points towards it; dir 0 keeps odd.
// The knobs are the three query values of the largest |slope|
// (power.PrefillCheck.Slopes); the second and third are first set to 0,
// so that each later knob, tuned from 0, has the resolution of its own
// small value: the first brings the output within about 2^-8 of the
// distance, the second within 2^-8 of what is left, the third within an
// ulp or two. Each knob is a secant search of at most 5
// evaluations, started from the slope, its value kept in [-8, 8]. A cmp
// of fp32 (no midpoint) or a row whose output has none (zero, NaN) is
// left as it is: the knob is then the value of the largest slope.
func tuneQuery(c *power.PrefillCheck, in, cmp oracle.DType, col, dir int, odd bool) (int, error) {
	q := c.Query()
	y, err := c.Row()
	if err != nil {
		return 0, err
	}
	slopes := c.Slopes(col)
	knobs := make([]int, len(q))
	for k := range knobs {
		knobs[k] = k
	}
	slices.SortStableFunc(knobs, func(a, b int) int { return -cmpAbs(slopes[a], slopes[b]) })
	knobs = knobs[:min(3, len(knobs))]
	t, evenBelow, ok := boundary.Midpoint(y[col], cmp)
	if !ok || slopes[knobs[0]] == 0 || math.IsNaN(slopes[knobs[0]]) {
		return knobs[0], nil
	}
	if dir != 0 {
		odd = (dir > 0) != evenBelow
	}
	if odd {
		b := math.Float32bits(t)
		if evenBelow {
			b++
		} else {
			b--
		}
		t = math.Float32frombits(b)
	}
	for _, k := range knobs[1:] {
		q[k] = 0
	}
	eval := func() (float32, error) {
		y, err := c.Row()
		if err != nil {
			return 0, err
		}
		return y[col], nil
	}
	f, err := eval()
	if err != nil {
		return 0, err
	}
	dist := func(f float32) float64 {
		if math.IsNaN(float64(f)) {
			return math.Inf(1)
		}
		return math.Abs(float64(f) - float64(t))
	}
	for _, k := range knobs {
		x0, f0, g := q[k], f, slopes[k]
		bestX, bestF := x0, f0
		for it := 0; it < 5 && bestF != t && g != 0 && !math.IsNaN(g) && !math.IsInf(g, 0); it++ {
			x1 := oracle.Round(in, float32(max(-8, min(8, float64(x0)+(float64(t)-float64(f0))/g))))
			if x1 == x0 {
				break
			}
			q[k] = x1
			f1, err := eval()
			if err != nil {
				return 0, err
			}
			if dist(f1) < dist(bestF) {
				bestX, bestF = x1, f1
			}
			g = (float64(f1) - float64(f0)) / (float64(x1) - float64(x0))
			x0, f0 = x1, f1
		}
		q[k], f = bestX, bestF
	}
	return knobs[len(knobs)-1], nil
}

// cmpAbs orders a and b by magnitude.
func cmpAbs(a, b float64) int {
	switch x, y := math.Abs(a), math.Abs(b); {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// prefillRowPower returns, for each sequence of prefill batch p, the
// alternatives of f that each of its rows shows (row pos·Heads + h,
// power.Family.Prefill, output rounded to cmp) and their union, rows
// checked in parallel.
func prefillRowPower(p *oracle.PrefillInput, f *power.Family, cmp oracle.DType) ([]power.Set, [][]power.Set, error) {
	per := p.SeqLen * p.Heads
	all := make([]power.Set, p.Rows())
	errs := make([]error, p.Rows())
	eachRow(p.Rows(), func(r int) { all[r], errs[r] = f.Prefill(*p, r, cmp) })
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	seqs := make([]power.Set, p.Seqs)
	rows := make([][]power.Set, p.Seqs)
	for s := range seqs {
		rows[s] = all[s*per : (s+1)*per]
		seqs[s] = power.Shown(len(f.Alts), rows[s]...)
	}
	return seqs, rows, nil
}

// steerMargin is how far, in scaled scores, steerQuery puts the steered
// token's score above every other token's: its weight is then e^0.5
// times any other's or more, far enough that the tuning's knobs seldom
// move the max elsewhere, near enough that the other tokens still weigh
// in. Measured (TestMutation/attn_prefill, the first sensitive draw):
// 97.9% of the single-row drifts at 0.5, 96.4% at 0.25 and 1, 92.7% at 2,
// 69.8% at 4 (the softmax so peaked that the tuning misses).
const steerMargin = 0.5

// steerQuery adds λ·k[j] to the query of check c (values of dtype in), λ
// >= 0 the least, in float64, for which token j's scaled score exceeds
// every other token's by margin:
//
//	scale·(q·(k[j] - k[t]) + λ·(k[j]·k[j] - k[j]·k[t])) >= margin   for each t != j
//
// (a token t with k[j]·k[t] >= k[j]·k[j] cannot be passed this way and is
// skipped), and rounds the query to in. With the max at a tile edge of
// an alternative that the declared schedule lacks (power.PrefillCheck.Edges)
// the alternative's running max grows there and the declared one's does
// not, so the two round differently.
func steerQuery(c *power.PrefillCheck, in oracle.DType, j int, margin float64) {
	q, kj := c.Query(), c.Key(j)
	scale := 1 / math.Sqrt(float64(len(q)))
	dot := func(a, b []float32) float64 {
		s := 0.0
		for d := range a {
			s += float64(a[d]) * float64(b[d])
		}
		return s
	}
	jj, qj := dot(kj, kj), dot(q, kj)
	lambda := 0.0
	for t := range c.Len() {
		if t == j {
			continue
		}
		kt := c.Key(t)
		if den := jj - dot(kj, kt); den > 0 {
			lambda = max(lambda, (margin/scale-(qj-dot(q, kt)))/den)
		}
	}
	for d := range q {
		q[d] = oracle.Round(in, float32(float64(q[d])+lambda*float64(kj[d])))
	}
}

// driftColumn returns the output column to tune for the alternatives of
// missing and the direction they move it (+1 up, -1 down), from the row's
// fp32 outputs at the query as it is now (power.PrefillCheck.Rows): of
// the columns that every group of missing moves the same way, the one
// whose least move is the most fp32 ulps (the tuning lands within an ulp
// or two of its target, so a move of several ulps crosses the midpoint); else the column some group moves most, in that group's
// direction; else (no group moves any column) the column of largest
// magnitude, direction 0 (the row's side decides).
func driftColumn(c *power.PrefillCheck, missing power.Set) (col, dir int, err error) {
	rows, err := c.Rows(missing)
	if err != nil {
		return 0, 0, err
	}
	y := rows[0]
	bestAll, bestAny := int64(0), int64(0)
	anyCol, anyDir := -1, 0
	col = -1
	for d := range y {
		lo, hi, far, farDir := int64(math.MaxInt64), int64(math.MinInt64), int64(0), 0
		for _, r := range rows[1:] {
			u := ordered(r[d]) - ordered(y[d])
			lo, hi = min(lo, u), max(hi, u)
			if abs64(u) > far {
				far, farDir = abs64(u), sign64(u)
			}
		}
		if far > bestAny {
			bestAny, anyCol, anyDir = far, d, farDir
		}
		if lo > 0 && lo > bestAll {
			bestAll, col, dir = lo, d, 1
		} else if hi < 0 && -hi > bestAll {
			bestAll, col, dir = -hi, d, -1
		}
	}
	if col >= 0 {
		return col, dir, nil
	}
	if anyCol >= 0 {
		return anyCol, anyDir, nil
	}
	col = 0
	for d := range y {
		if math.Abs(float64(y[d])) > math.Abs(float64(y[col])) {
			col = d
		}
	}
	return col, 0, nil
}

// ordered maps a float32 to an integer in the order of the values, one
// step per ulp (-0 and +0 both to 0).
func ordered(x float32) int64 {
	b := int64(math.Float32bits(x))
	if b&(1<<31) != 0 {
		return -(b &^ (1 << 31))
	}
	return b
}

func abs64(x int64) int64 { return max(x, -x) }

func sign64(x int64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// prefillAttempts is the most candidates a prefill row tries (prefillRow),
// twice sensitiveAttempts: a row shows a tile alternative only where the
// max of its scores stays, through the tuning, at a tile edge the
// declared schedule lacks, and more steered candidates make one draw
// show nearly the whole family (TestMutation/attn_prefill: 98% of the
// single-row drifts after the first sensitive draw against 80-88% with 4),
// so the power loop stops draws earlier.
const prefillAttempts = 8
