package inputs

import (
	"math"
	"slices"

	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/target"
)

// decodeRequest picks the candidate of slot j of an attn_decode case (a
// request, row key i = g.keys[j], whose rows are its heads), writes it
// into g.b and returns the alternatives of the family that some head of
// it shows, and which candidate it is. Of at most sensitiveAttempts
// candidates it takes the one whose heads together show the most
// alternatives prior (what key i showed in the chain's earlier draws)
// has not (ties: the most alternatives; the first such; one that leaves
// none unshown stops the search):
//
//	candidate 0   the request of the normal draw (same seed): q, K and V
//	candidate a   q re-drawn with row key i + a<<40, K and V rows with
//	              row keys (i<<32 | position) ^ a<<60
//
// each nudged as the boundary draw nudges it (boundary.AttendRow on each
// head h, the side odd when i + seed + h is odd, in the compare dtype),
// then, head by head, the knob of head h (V of the head's highest-score
// token in the column AttendRow tunes) moved by each of knobVariants,
// the step that shows the most alternatives no earlier head or draw
// showed kept (the first step, no change, when prior holds the whole
// family: then candidate 0 as nudged, its set measured by
// power.Family.Decode). A request's bits depend on (Seed, Draw, i) only.
// Its cost:
// sensitiveAttempts x Heads x (|Family|+1) oracle.DecodeProbes (a decode
// of the row each) and x len(knobVariants) x (|Family|+1) x group KV
// columns (L fmas each) for the knob steps.
func (g *sensitiveGen) decodeRequest(j int, prior power.Set) (power.Set, choice, error) {
	d := g.b.Input.(*oracle.DecodeInput)
	H, KH, D := d.Heads, d.KVHeads, d.HeadDim
	n := len(g.f.Alts)
	want := n
	if prior != nil {
		want = n - prior.Len()
	}
	if want == 0 { // every alternative shown before: candidate 0 as nudged, its set measured once
		q, k, v, err := g.decodeCandidate(j, 0)
		if err != nil {
			return nil, choice{}, err
		}
		copy(d.Q[j*H*D:(j+1)*H*D], q)
		d.K[j], d.V[j] = k, v
		sets, errs := decodeRowPower(&oracle.DecodeInput{Q: q, K: [][]float32{k}, V: [][]float32{v}, Heads: H, KVHeads: KH, HeadDim: D}, g.f, g.cmp)
		return sets[0], choice{}, errs[0]
	}
	var bestQ, bestK, bestV []float32
	var bestSet power.Set
	var bestC choice
	bestNew, bestN := -1, -1
	for a := range sensitiveAttempts {
		q, k, v, err := g.decodeCandidate(j, a)
		if err != nil {
			return nil, choice{}, err
		}
		in := oracle.DecodeInput{Q: q, K: [][]float32{k}, V: [][]float32{v}, Heads: H, KVHeads: KH, HeadDim: D, Out: oracle.FP32}
		checks := make([]*power.DecodeCheck, H)
		for h := range checks {
			if checks[h], err = g.f.NewDecodeCheck(in, h, g.cmp); err != nil {
				return nil, choice{}, err
			}
		}
		setV := func(i int, x float32) {
			v[i] = x
			for _, c := range checks {
				c.Changed(i)
			}
		}
		shown := power.NewSet(n)
		if prior != nil {
			shown.Or(prior)
		}
		for h, c := range checks {
			knob := decodeKnob(q, k, H, KH, D, h)
			if knob < 0 {
				continue
			}
			x0 := v[knob]
			best, bestFresh := x0, -1
			for _, step := range knobVariants {
				x := boundary.Step(g.b.In, x0, step)
				setV(knob, x)
				if fresh := c.Shows().Minus(shown).Len(); fresh > bestFresh {
					best, bestFresh = x, fresh
				}
			}
			setV(knob, best)
			shown.Or(c.Shows())
		}
		set := power.NewSet(n) // the heads' sets as the request is now: a later head's knob may move an earlier head's column
		for _, c := range checks {
			set.Or(c.Shows())
		}
		fresh := set.Len()
		if prior != nil {
			fresh = set.Minus(prior).Len()
		}
		if fresh > bestNew || fresh == bestNew && set.Len() > bestN {
			bestQ, bestK, bestV, bestSet, bestNew, bestN, bestC = q, k, v, set, fresh, set.Len(), choice{uint8(a), 0}
		}
		if bestNew == want {
			break
		}
	}
	copy(d.Q[j*H*D:(j+1)*H*D], bestQ)
	d.K[j], d.V[j] = bestK, bestV
	return bestSet, bestC, nil
}

// decodeCandidate returns candidate a of slot j (decodeRequest), nudged:
// q, K and V of the request. It reads the slot's normal request, so it
// runs before the slot is replaced.
func (g *sensitiveGen) decodeCandidate(j, a int) (q, k, v []float32, err error) {
	d := g.b.Input.(*oracle.DecodeInput)
	H, KH, D := d.Heads, d.KVHeads, d.HeadDim
	i := uint64(g.keys[j])
	if a == 0 {
		q, k, v = slices.Clone(d.Q[j*H*D:(j+1)*H*D]), slices.Clone(d.K[j]), slices.Clone(d.V[j])
	} else {
		L := len(d.K[j]) / (KH * D)
		qkv := attnTensors(g.c)
		key := func(p int) uint64 { return (i<<32 | uint64(p)) ^ uint64(a)<<60 }
		if q, err = fill(g.c, qkv[0].ID, qkv[0].Dist, g.b.In, qkv[0].Scale, 1, H*D, func(int) uint64 { return i + uint64(a)<<40 }); err != nil {
			return nil, nil, nil, err
		}
		if k, err = fill(g.c, qkv[1].ID, qkv[1].Dist, g.b.In, qkv[1].Scale, L, KH*D, key); err != nil {
			return nil, nil, nil, err
		}
		if v, err = fill(g.c, qkv[2].ID, qkv[2].Dist, g.b.In, qkv[2].Scale, L, KH*D, key); err != nil {
			return nil, nil, nil, err
		}
	}
	for h := range H {
		odd := (i+g.c.Seed+uint64(h))%2 == 1
		boundary.AttendRow(q, k, v, H, KH, D, h, g.b.In, g.cmp, target.OracleAttentionSchedule, odd)
	}
	return q, k, v, nil
}

// decodeKnob is the index in V of head h's knob: the value, in the column
// boundary.AttendRow tunes ((h mod group) mod headDim of the head's KV
// head), of the token with the highest score q·k (float64); -1 for an
// empty cache or scores that are not finite.
func decodeKnob(q, k []float32, H, KH, D, h int) int {
	group := H / KH
	kvh, col := h/group, (h%group)%D
	stride := KH * D
	qh := q[h*D : (h+1)*D]
	top, best := -1, math.Inf(-1)
	for j := range len(k) / stride {
		s := 0.0
		for c, x := range qh {
			s += float64(x) * float64(k[j*stride+kvh*D+c])
		}
		if s > best {
			top, best = j, s
		}
	}
	if top < 0 {
		return -1
	}
	return top*stride + kvh*D + col
}

// decodeRowPower returns the alternatives of f that each request of
// decode batch d shows (the union over its heads, power.Family.Decode,
// output rounded to cmp), requests checked in parallel.
func decodeRowPower(d *oracle.DecodeInput, f *power.Family, cmp oracle.DType) ([]power.Set, []error) {
	n := len(d.K)
	H, D := d.Heads, d.HeadDim
	sets := make([]power.Set, n)
	errs := make([]error, n)
	eachRow(n, func(i int) {
		in := oracle.DecodeInput{Q: d.Q[i*H*D : (i+1)*H*D], K: d.K[i : i+1], V: d.V[i : i+1], Heads: H, KVHeads: d.KVHeads, HeadDim: D, Out: oracle.FP32}
		s := power.NewSet(len(f.Alts))
		for h := range H {
			hs, err := f.Decode(in, h, cmp)
			if err != nil {
				errs[i] = err
				return
			}
			s.Or(hs)
		}
		sets[i] = s
	})
	return sets, errs
}
