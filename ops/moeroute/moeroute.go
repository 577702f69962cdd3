// Package moeroute is the op moe_route: a mixture-of-experts router's
// top-k selection. A row (one token) is E router logits; its output is
// the k chosen expert ids (int32) and their renormalised weights (fp32).
//
// The reference (Route) computes, for a row x of E logits (fp32 values or
// bf16 values held in fp32), with correctly rounded fp32 operations and
// the oracle's portable exp (oracle.Exp32):
//
//	m    = max(x[0], x[1], ..., x[E-1])          (oracle.Max32, e = 0..E-1)
//	p[e] = Exp32(x[e] - m)                       (oracle.Sub32)
//	S    = p[0] + p[1] + ... + p[E-1]            in the policy's sum order:
//	         sequential: ((p[0] + p[1]) + p[2]) + ... + p[E-1]
//	         pairwise:   adjacent pairs level by level, an odd last element
//	                     carried up: (p0+p1)+(p2+p3), ... until one is left
//	q[e] = p[e] / S                              (oracle.Div32)
//	id[j], j = 0..k-1: the expert not chosen yet with the largest q; among
//	         equal q the lowest index first (tie=lowest, the default) or the
//	         highest (tie=highest); a NaN q ranks below every number
//	W    = q[id[0]] + q[id[1]] + ... + q[id[k-1]] (sequential, rank order)
//	w[j] = q[id[j]] / W
//
// DeepSeek-V3's router (sigmoid scores, a bias for selection only, grouped
// selection of 4 of 8 expert groups) is not this op; docs/moe.md says what
// it covers.
package moeroute

import (
	"fmt"
	"math"
	"strings"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
)

// Name is the op's name.
const Name = "moe_route"

// Dimension names.
const (
	DimExperts = "experts"
	DimTopK    = "top_k"
)

// MaxExperts bounds a row's width.
const MaxExperts = 1 << 16

// Output columns.
const (
	ColIDs     = 0 // expert_ids: k int32
	ColWeights = 1 // weights: k fp32
)

// TieBreak says which of two experts with equal probability is chosen
// first.
type TieBreak uint8

const (
	TieLowest  TieBreak = iota // the lowest expert index first
	TieHighest                 // the highest expert index first
)

// SumOrder is the order of the softmax denominator's sum.
type SumOrder uint8

const (
	SumSequential SumOrder = iota
	SumPairwise
)

// Policy is the schedule of a router: its tie-break and sum order. The
// zero value (tie=lowest sum=sequential) is the default a target that
// declares nothing is held to.
type Policy struct {
	Tie TieBreak
	Sum SumOrder
}

func (p Policy) String() string {
	tie, sum := "lowest", "sequential"
	if p.Tie == TieHighest {
		tie = "highest"
	}
	if p.Sum == SumPairwise {
		sum = "pairwise"
	}
	return "tie=" + tie + " sum=" + sum
}

// ParsePolicy parses Policy.String's form; "" is the default policy and a
// missing key keeps its default.
func ParsePolicy(s string) (Policy, error) {
	var p Policy
	for _, f := range strings.Fields(s) {
		k, v, _ := strings.Cut(f, "=")
		switch {
		case k == "tie" && v == "lowest":
			p.Tie = TieLowest
		case k == "tie" && v == "highest":
			p.Tie = TieHighest
		case k == "sum" && v == "sequential":
			p.Sum = SumSequential
		case k == "sum" && v == "pairwise":
			p.Sum = SumPairwise
		default:
			return Policy{}, fmt.Errorf("moe_route policy %q: unknown %q (want tie=lowest|highest sum=sequential|pairwise)", s, f)
		}
	}
	return p, nil
}

// Route is the reference: it writes the k expert ids and weights of row x
// (the package comment states the loop) into ids and w.
func Route(x []float32, p Policy, ids []int32, w []float32) {
	m := x[0]
	for _, v := range x[1:] {
		m = oracle.Max32(m, v)
	}
	q := make([]float32, len(x))
	for e, v := range x {
		q[e] = oracle.Exp32(oracle.Sub32(v, m))
	}
	s := sum(q, p.Sum)
	for e := range q {
		q[e] = oracle.Div32(q[e], s)
	}
	chosen := make([]bool, len(x))
	for j := range ids {
		best := -1
		for e := range q {
			if !chosen[e] && (best < 0 || before(q, e, best, p.Tie)) {
				best = e
			}
		}
		chosen[best] = true
		ids[j] = int32(best)
	}
	var total float32
	for j, id := range ids {
		if j == 0 {
			total = q[id]
		} else {
			total = oracle.Add32(total, q[id])
		}
	}
	for j, id := range ids {
		w[j] = oracle.Div32(q[id], total)
	}
}

// before reports whether expert a ranks before expert b: a larger q, or
// an equal q and the tie-break's index order; a NaN ranks below every
// number and NaNs by index.
func before(q []float32, a, b int, tie TieBreak) bool {
	qa, qb := q[a], q[b]
	switch na, nb := qa != qa, qb != qb; {
	case na && !nb:
		return false
	case nb && !na:
		return true
	case !na && qa != qb:
		return qa > qb
	}
	if tie == TieHighest {
		return a > b
	}
	return a < b
}

// sum is the softmax denominator in order o.
func sum(p []float32, o SumOrder) float32 {
	if o == SumSequential {
		s := p[0]
		for _, v := range p[1:] {
			s = oracle.Add32(s, v)
		}
		return s
	}
	level := append([]float32(nil), p...)
	for len(level) > 1 {
		next := level[:0:0]
		for i := 0; i+1 < len(level); i += 2 {
			next = append(next, oracle.Add32(level[i], level[i+1]))
		}
		if len(level)%2 == 1 {
			next = append(next, level[len(level)-1])
		}
		level = next
	}
	return level[0]
}

// shape returns the experts and k of s, checked.
func shape(s ops.Shape) (experts, k int, err error) {
	experts, k = s[DimExperts], s[DimTopK]
	if experts < 1 || experts > MaxExperts {
		return 0, 0, fmt.Errorf("moe_route: experts = %d, want 1..%d", experts, MaxExperts)
	}
	if k < 1 || k > experts {
		return 0, 0, fmt.Errorf("moe_route: top_k = %d, want 1..experts (%d)", k, experts)
	}
	return experts, k, nil
}

// columns are the output columns for k.
func columns(k int) []ops.Column {
	return []ops.Column{{Name: "expert_ids", Elem: ops.Int32, Width: k}, {Name: "weights", Elem: ops.FP32, Width: k}}
}

// nextUp is the next value of dtype d above v (v finite, below the
// largest).
func nextUp(d oracle.DType, v float32) float32 {
	if v == 0 {
		return oracle.FromBits(d, 1)
	}
	b := oracle.ToBits(d, v)
	if math.Signbit(float64(v)) {
		return oracle.FromBits(d, b-1)
	}
	return oracle.FromBits(d, b+1)
}
