package fuzz

import (
	"math/rand"

	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/fuzz/internal/casecost"
	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// draw returns the next case of pair p that the campaign's shard owns
// (its stream's, or with Reshape set, drawReshaped's) and hands it to
// OnDraw.
func (c *Campaign) draw(p *pairState) spec.Case {
	k := c.drawOwned(p)
	if c.OnDraw != nil {
		c.OnDraw(k)
	}
	return k
}

func (c *Campaign) drawOwned(p *pairState) spec.Case {
	if c.Reshape == nil {
		return shardDraw(c.Shard, &p.stream, p.Op, p.Relation, &p.drawn)
	}
	for {
		k := drawReshaped(p.stream.rng, p.Op, p.Relation, c.Reshape, c.MaxTokens, p.cpuBound)
		n := p.drawn
		p.drawn++
		if c.Shard.Owns(n) {
			return k
		}
	}
}

// profileCPUCost bounds the CPU work (casecost.Of) of a case drawn at a
// model profile when the CPU computes every item of it (cpuBound): a
// campaign's big draw, so that a CPU campaign at a profile of a width in
// the hundreds reaches all of 1..max_tokens (400 rows of hidden 768 under
// batch invariance cost 2^22.3) and one at a real width (4096) still runs
// a few hundred rows at a rate of cases a CPU campaign can afford.
const profileCPUCost = casecost.Big

// cpuBound is the casecost.Of bound of pair p's cases at a model profile,
// the work the CPU must do for them:
//
//   - profileCPUCost when the CPU computes every item: a target of the
//     pair runs on the CPU (Device "cpu": the oracles, the drift models),
//     or the relation compares with the CPU oracle row by row
//     (logprob_parity, and oracle_parity of a target without a device
//     reference);
//   - 0, no CPU bound, when the targets run elsewhere (a GPU, a worker or
//     adapter process) and are compared with themselves or each other
//     (batch_invariance, padding, determinism, path_parity, cross_device),
//     or with their device reference, which the CPU oracle checks on
//     sampled items only (referenceStride): the case is bounded by
//     spec.MaxElements alone.
func cpuBound(p target.Pair) int64 {
	for _, name := range p.Targets {
		t, err := target.Lookup(name)
		if err != nil || t.Info().Device == "cpu" {
			return profileCPUCost
		}
		switch p.Relation {
		case spec.RelLogProbParity:
			return profileCPUCost
		case spec.RelOracleParity:
			if t.Info().Schedule == "" || t.Info().ULPBound != 0 || relate.DeviceReference(t) == nil {
				return profileCPUCost
			}
		}
	}
	return 0
}

// drawReshaped draws from gen.Case and rewrites each draw's inner sizes
// and dtypes with reshape (a model profile's). With maxTokens = 0 it takes
// the first of up to 64 draws with casecost.Of <= casecost.SmallOf(op) (8x for
// attention prefill), else the cheapest: the cost bound falls on the batch
// dimensions, which keep gen's bias.
//
// With maxTokens > 0 (the profile's max_tokens) the batch dimensions are
// drawn again (gen.Spread, its distribution gen.Tokens), try i (from 0)
// over 1..⌊maxTokens/2^⌊i/8⌋⌋, and a draw is taken when it fits
// spec.MaxElements and, when bound > 0 (cpuBound), has casecost.Of <= bound:
// of up to 64 tries the first that fits, else the one needing the fewest
// values (bound 0) or the cheapest. The drawn batch sizes are thus
// gen.Tokens' distribution over the whole 1..maxTokens where the first
// draw fits (GPU and process targets compared with themselves at widths
// up to 8192: rmsnorm, attention, the layer's projections; CPU targets
// at a width in the hundreds), and narrowed to what fits elsewhere
// (lm_head and vocabulary-wide logprob: memory; CPU targets at real
// widths: CPU work).
func drawReshaped(r *rand.Rand, op spec.Op, relation string, reshape func(*rand.Rand, *spec.Case), maxTokens int, bound int64) spec.Case {
	small := casecost.SmallOf(op)
	var cheap spec.Case
	cheapCost := int64(-1)
	for i := range 64 {
		c := gen.Case(r, op, relation)
		reshape(r, &c)
		cost := casecost.Of(c)
		if maxTokens <= 0 {
			if cost <= small {
				return c
			}
		} else {
			gen.Spread(r, &c, max(1, maxTokens>>(i/8)))
			elems := c.Elements()
			cost = casecost.Of(c)
			if elems <= spec.MaxElements && (bound <= 0 || cost <= bound) {
				return c
			}
			if bound <= 0 {
				cost = int64(elems)
			}
		}
		if cheapCost < 0 || cost < cheapCost {
			cheap, cheapCost = c, cost
		}
	}
	return cheap
}
