// Package power measures how strong a draw's inputs are: for each row,
// which alternatives of a family of reduction orders change the row's
// output (Family, Set), and, over the draws of a scan, the share of the
// family that every position shows in at least one draw (Coverage).
//
// A reduction-order change shows in a row only when it moves the row's
// output bits: an alternative whose fp32 sum (RMSNorm's sum of squares,
// log-prob's sum of exponentials) equals the declared schedule's, or
// whose rstd or log rounds the same, cannot show in that row at all, and
// a row tuned onto a rounding midpoint shows a change in one direction
// only. A certificate is as strong as the share of (row, alternative)
// pairs whose output differs; this package counts them.
package power

import (
	"fmt"
	"math"
	"slices"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Family is the alternative schedules a row is checked against, and the
// declared schedule they are compared with.
type Family struct {
	Op       spec.Op
	Cols     int // the row length the alternatives were told apart at (gemm: K; attn_decode: the KV length; attn_prefill: the sequence length)
	Declared oracle.Schedule
	// Alts are the alternatives: explain.Space's schedules of Op (for
	// rmsnorm and logprob: threads 1..1024 x vec 1,2,4,8 x warp x cross,
	// and rmsnorm's two output orders; for gemm GEMMSchedules; for
	// attn_decode and attn_prefill DecodeSchedules), one of
	// each group that runs the same operations on a row of Cols values,
	// without the declared schedule's group.
	Alts []oracle.Schedule
}

// NewFamily returns the family of op at row length cols (hidden, gemm's
// K, vocab) for inputs of dtype in (it picks gemm's tensor core) around
// the declared schedule, whose kind is the family's (an rmsnorm,
// logprob, gemm or attention schedule; op only names it). Two reductions run the same operations when
// they differ only where no row can tell: the vector width of one thread
// (it visits the row in order whatever the width), the warp order of at
// most 2 lanes, the cross-warp order of at most 2 warps (a + b either
// way); gemm's as gemmKey says.
//
// attn_decode's cols is the KV length: DecodeSchedules without those
// whose split bounds and tile (capped at the longest split) at that
// length are another's. attn_prefill's cols is the sequence length: the
// same schedules told apart at the longest KV range a query reads (a
// query at position p reads p+1 tokens; PrefillCheck drops, per row,
// those that run the declared schedule's operations there).
func NewFamily(op spec.Op, cols int, in oracle.DType, declared oracle.Schedule) (*Family, error) {
	if cols < 1 {
		return nil, fmt.Errorf("power: %s family at row length %d, want >= 1", op, cols)
	}
	f := &Family{Op: op, Cols: cols, Declared: declared}
	seen := map[string]bool{}
	add := func(s oracle.Schedule, key string) {
		if !seen[key] {
			seen[key] = true
			f.Alts = append(f.Alts, s)
		}
	}
	switch d := declared.(type) {
	case oracle.RMSNormSchedule:
		seen[sameOrder(d.Reduce)+d.Order.String()] = true
		for _, r := range Reductions() {
			for _, o := range ScaleOrders {
				add(oracle.RMSNormSchedule{Reduce: r, Order: o}, sameOrder(r)+o.String())
			}
		}
	case oracle.LogProbSchedule:
		seen[sameOrder(d.Reduce)] = true
		for _, r := range Reductions() {
			add(oracle.LogProbSchedule{Reduce: r}, sameOrder(r))
		}
	case oracle.GEMMSchedule:
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("power: gemm family: declared %w", err)
		}
		seen[gemmKey(d, cols)] = true
		for _, s := range GEMMSchedules(in) {
			add(s, gemmKey(s, cols))
		}
	case oracle.AttentionSchedule:
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("power: %s family: declared %w", op, err)
		}
		seen[decodeKey(d, cols)] = true
		for _, s := range DecodeSchedules() {
			add(s, decodeKey(s, cols))
		}
	default:
		return nil, fmt.Errorf("power: %s: no family around a %T schedule (want an rmsnorm, logprob, gemm or attention schedule)", op, declared)
	}
	return f, nil
}

// Reductions is the reduction orders of rmsnorm and logprob schedules, in
// the canonical order explain.Space lists them (and searches them):
//
//	threads 1, 2, 4 .. 1024 x vec 1, 2, 4, 8 x warp butterfly, sequential
//	x cross sequential, tree                                     (176)
//
// The one place this space is decided: a family (NewFamily) is explain's
// space without the schedules that run the same operations.
func Reductions() []oracle.Reduction {
	var rs []oracle.Reduction
	for t := 1; t <= 1024; t *= 2 {
		for _, v := range []int{1, 2, 4, 8} {
			for _, w := range []oracle.WarpOrder{oracle.WarpButterfly, oracle.WarpSequential} {
				for _, c := range []oracle.CrossOrder{oracle.CrossSequential, oracle.CrossTree} {
					rs = append(rs, oracle.Reduction{Threads: t, Vec: v, Warp: w, Cross: c})
				}
			}
		}
	}
	return rs
}

// ScaleOrders is rmsnorm's output orders, in explain.Space's order.
var ScaleOrders = []oracle.ScaleOrder{oracle.ScaleThenWeight, oracle.WeightedScale}

// sameOrder is r with the choices that change no operation made equal.
func sameOrder(r oracle.Reduction) string {
	if r.Threads == 1 {
		r.Vec = 1
	}
	if min(r.Threads, 32) <= 2 {
		r.Warp = oracle.WarpButterfly
	}
	if (r.Threads+31)/32 <= 2 {
		r.Cross = oracle.CrossSequential
	}
	return r.String()
}

// Set is a set of alternatives (bit a: f.Alts[a]).
type Set []uint64

// NewSet returns an empty set of n alternatives.
func NewSet(n int) Set { return make(Set, (n+63)/64) }

// Add puts alternative a in s.
func (s Set) Add(a int) { s[a/64] |= 1 << (a % 64) }

// Has reports whether a is in s.
func (s Set) Has(a int) bool { return s[a/64]&(1<<(a%64)) != 0 }

// Or adds every alternative of t to s.
func (s Set) Or(t Set) {
	for i := range s {
		s[i] |= t[i]
	}
}

// Minus is the alternatives of s that are not in t, a new set.
func (s Set) Minus(t Set) Set {
	d := make(Set, len(s))
	for i := range s {
		d[i] = s[i] &^ t[i]
	}
	return d
}

// Union is the alternatives of s or t, a new set.
func Union(s, t Set) Set {
	u := slices.Clone(s)
	u.Or(t)
	return u
}

// Len is the number of alternatives in s.
func (s Set) Len() int {
	n := 0
	for _, w := range s {
		for ; w != 0; w &= w - 1 {
			n++
		}
	}
	return n
}

// RMSNorm returns the alternatives that row x (weights w, eps) shows:
// alternative a is in the set when some output of the row, rounded to
// out, has other bits under f.Alts[a] than under f.Declared
// (RMSNormCheck.Shows on a copy of x).
func (f *Family) RMSNorm(x, w []float32, eps float32, out oracle.DType) (Set, error) {
	c, err := f.NewRMSNormCheck(slices.Clone(x), w, eps, out)
	if err != nil {
		return nil, err
	}
	return c.Shows(), nil
}

// RMSNormCheck tells which alternatives of a family an RMSNorm row shows
// while single elements of the row change (a search over a knob's
// values): it keeps one oracle.RMSNormProbe per distinct (threads, vector
// width) of the family, whose thread partials serve every warp and cross
// order (RMSNormProbe.TapWith; the output order does not change the sum),
// so a change of x[j] costs each of them one thread's partial, and each
// distinct reduction a combine.
type RMSNormCheck struct {
	f      *Family
	x, w   []float32
	out    oracle.DType
	probes []*oracle.RMSNormProbe // one per (threads, vec)
	decl   reduction
	alt    []reduction // alternative a's
	ref    []float32   // scratch: the declared row's outputs in fp32
	refOut []float32   // scratch: ref rounded to out
}

// reduction is a reduction of the family: a probe and its combine.
type reduction struct {
	probe int
	warp  oracle.WarpOrder
	cross oracle.CrossOrder
}

// NewRMSNormCheck starts a check of row x (the caller's slice, which Set
// writes; the caller must not change it otherwise).
func (f *Family) NewRMSNormCheck(x, w []float32, eps float32, out oracle.DType) (*RMSNormCheck, error) {
	d, ok := f.Declared.(oracle.RMSNormSchedule)
	if !ok {
		return nil, fmt.Errorf("power: rmsnorm check of a %s family", f.Op)
	}
	c := &RMSNormCheck{f: f, x: x, w: w, out: out, alt: make([]reduction, len(f.Alts))}
	index := map[[2]int]int{}
	of := func(r oracle.Reduction) (reduction, error) {
		tv := [2]int{r.Threads, r.Vec}
		i, ok := index[tv]
		if !ok {
			p, err := oracle.NewRMSNormProbe(x, w, eps, oracle.RMSNormSchedule{Reduce: r, Order: oracle.ScaleThenWeight})
			if err != nil {
				return reduction{}, fmt.Errorf("power: rmsnorm %s: %w", r, err)
			}
			i = len(c.probes)
			index[tv] = i
			c.probes = append(c.probes, p)
		}
		return reduction{i, r.Warp, r.Cross}, nil
	}
	var err error
	if c.decl, err = of(d.Reduce); err != nil {
		return nil, err
	}
	for a, alt := range f.Alts {
		if c.alt[a], err = of(alt.(oracle.RMSNormSchedule).Reduce); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Set stores v in x[j].
func (c *RMSNormCheck) Set(j int, v float32) {
	for _, p := range c.probes {
		p.Set(j, v)
	}
}

// rstd is the row's rstd under reduction r.
func (c *RMSNormCheck) rstd(r reduction) float32 {
	return c.probes[r.probe].TapWith(r.warp, r.cross).Rstd
}

// Shows returns the alternatives the row shows now. An alternative whose
// rstd has the declared one's bits and whose output order is the declared
// one's cannot differ and costs one combine; the others cost a row of
// outputs (up to the first that differs) once per distinct (rstd, order).
func (c *RMSNormCheck) Shows() Set {
	d := c.f.Declared.(oracle.RMSNormSchedule)
	type key struct {
		rstd  uint32
		order oracle.ScaleOrder
	}
	dr := c.rstd(c.decl)
	c.ref, c.refOut = slices.Grow(c.ref[:0], len(c.x)), slices.Grow(c.refOut[:0], len(c.x))
	for j := range c.x {
		y := rmsnormY(c.x, c.w, j, dr, d.Order)
		c.ref, c.refOut = append(c.ref, y), append(c.refOut, oracle.Round(c.out, y))
	}
	differs := map[key]bool{{math.Float32bits(dr), d.Order}: false}
	// differ reports whether the row at rstd in order o has other bits
	// than the declared row somewhere: the first differing column ends it.
	// A bf16 output whose declared fp32 value is farther from a bf16
	// rounding boundary than the two can be apart (farFromBF16Boundary)
	// rounds the same and is not computed.
	differ := func(rstd float32, o oracle.ScaleOrder) bool {
		margin := bf16Margin(dr, rstd)
		for j, y := range c.ref {
			if c.out == oracle.BF16 && farFromBF16Boundary(y, margin) {
				continue
			}
			if math.Float32bits(oracle.Round(c.out, rmsnormY(c.x, c.w, j, rstd, o))) != math.Float32bits(c.refOut[j]) {
				return true
			}
		}
		return false
	}
	rstds := map[reduction]float32{}
	s := NewSet(len(c.f.Alts))
	for a, alt := range c.f.Alts {
		o := alt.(oracle.RMSNormSchedule).Order
		r, ok := rstds[c.alt[a]]
		if !ok {
			r = c.rstd(c.alt[a])
			rstds[c.alt[a]] = r
		}
		k := key{math.Float32bits(r), o}
		diff, ok := differs[k]
		if !ok {
			diff = differ(r, o)
			differs[k] = diff
		}
		if diff {
			s.Add(a)
		}
	}
	return s
}

// bf16Margin bounds, in fp32 ulps of the declared output, how far an
// RMSNorm output at rstd r (either order) can be from the same output at
// the declared rstd dr (the declared order): y = x·r·w rounded twice in
// fp32 either way, so |y' - y| <= |y|·(|r/dr - 1| + 4u + O(u^2)), u =
// 2^-24, below 2^24·(|r/dr - 1| + 5u) ulps of y; plus one.
func bf16Margin(dr, r float32) uint32 {
	d := math.Abs(float64(r)/float64(dr) - 1)
	if !(d < 1.0/(1<<12)) { // far apart (or not finite): no column is skipped
		return 1 << 16
	}
	return uint32(math.Ceil(d*(1<<24))) + 6
}

// farFromBF16Boundary reports whether every fp32 value within margin ulps
// of y (a normal fp32 of exponent field 2..254) rounds to y's bf16: y's
// low 16 bits are more than margin from 0x8000, the rounding boundary in
// its binade, and margin is below 0x4000, the least distance in y's ulps
// from y to a boundary of the binade below (the binade above's is
// farther).
func farFromBF16Boundary(y float32, margin uint32) bool {
	b := math.Float32bits(y)
	if e := b >> 23 & 0xff; e < 2 || e == 0xff || margin >= 0x4000 {
		return false
	}
	low := int32(b & 0xffff)
	dist := low - 0x8000
	if dist < 0 {
		dist = -dist
	}
	return uint32(dist) > margin
}

// rmsnormY is output j of row x at rstd in order o, as oracle.RMSNorm
// computes it in fp32.
func rmsnormY(x, w []float32, j int, rstd float32, o oracle.ScaleOrder) float32 {
	if o == oracle.WeightedScale {
		return oracle.Mul32(x[j], oracle.Mul32(rstd, w[j]))
	}
	return oracle.Mul32(oracle.Mul32(x[j], rstd), w[j])
}

// LogProb returns the alternatives that the log-prob row of logits x
// with target id t shows: alternative a is in the set when the row's
// log-prob, rounded to out, has other bits under f.Alts[a] than under
// f.Declared. The max is the same under every order (max is exact), so
// the exponentials are computed once (Cols Exp32) and each alternative
// costs one scheduled sum of them (oracle.SumBy, Cols adds): about
// |Alts| x Cols adds a row.
func (f *Family) LogProb(x []float32, t int, out oracle.DType) (Set, error) {
	if t < 0 || t >= len(x) {
		return nil, fmt.Errorf("power: logprob target %d of vocab %d", t, len(x))
	}
	d := f.Declared.(oracle.LogProbSchedule)
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = oracle.Max32(m, v)
	}
	e := make([]float32, len(x))
	for j, v := range x {
		e[j] = oracle.Exp32(oracle.Sub32(v, m))
	}
	lp := func(r oracle.Reduction) float32 {
		return oracle.Round(out, oracle.Sub32(oracle.Sub32(x[t], m), oracle.Log32(oracle.SumBy(r, e))))
	}
	ref := math.Float32bits(lp(d.Reduce))
	s := NewSet(len(f.Alts))
	for a, alt := range f.Alts {
		if math.Float32bits(lp(alt.(oracle.LogProbSchedule).Reduce)) != ref {
			s.Add(a)
		}
	}
	return s, nil
}

// Shown is the union of sets: the alternatives some row shows.
func Shown(alts int, sets ...Set) Set {
	u := NewSet(alts)
	for _, s := range sets {
		u.Or(s)
	}
	return u
}
