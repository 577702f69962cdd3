package fuzz

import (
	"math/rand"

	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/spec"
)

// draw returns the next case of pair p that the campaign's shard owns:
// its stream's, or with Reshape set, drawReshaped's.
func (c *Campaign) draw(p *pairState) spec.Case {
	if c.Reshape == nil {
		return c.Shard.draw(&p.stream, p.Op, p.Relation, &p.drawn)
	}
	for {
		k := drawReshaped(p.stream.rng, p.Op, p.Relation, c.Reshape)
		n := p.drawn
		p.drawn++
		if c.Shard.Owns(n) {
			return k
		}
	}
}

// drawReshaped draws from gen.Case, rewrites each draw's inner sizes with
// reshape, and takes the first of up to 64 draws with CaseCost <= SmallCost
// (8x for attention prefill), else the cheapest: a model's inner sizes are
// fixed, so the cost bound falls on the batch dimensions, which keep gen's
// bias (powers of two, multiples of 32, 64 and 132, named rows).
func drawReshaped(r *rand.Rand, op spec.Op, relation string, reshape func(*rand.Rand, *spec.Case)) spec.Case {
	small := int64(SmallCost)
	if op == spec.OpAttnPrefill {
		small *= 8
	}
	var cheap spec.Case
	cheapCost := int64(-1)
	for range 64 {
		c := gen.Case(r, op, relation)
		reshape(r, &c)
		cost := CaseCost(c)
		if cost <= small {
			return c
		}
		if cheapCost < 0 || cost < cheapCost {
			cheap, cheapCost = c, cost
		}
	}
	return cheap
}
