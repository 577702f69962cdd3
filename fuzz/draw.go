package fuzz

import (
	"math/rand"

	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/fuzz/internal/casecost"
	"github.com/bitparity/bitparity/spec"
)

// stream is one pair's sequence of cases, drawn from rng: drawSized's
// draws in order, each small draw that casecost.ResidueDraw picks followed by its
// gen.Residue rewrite. The residue cases come in addition, and the seed
// of the draw picks them (it is uniform and already drawn), so a campaign
// seed draws every case it drew without them, in the same order: no
// finding is lost, it comes at most one case in nine later.
type stream struct {
	rng  *rand.Rand
	owed *spec.Case // the residue case of the last draw, not yet returned
}

// next returns the stream's next case of op under relation.
func (s *stream) next(op spec.Op, relation string) spec.Case {
	if c := s.owed; c != nil {
		s.owed = nil
		return *c
	}
	c, big := drawSized(s.rng, op, relation)
	if !big && casecost.ResidueDraw(c) {
		rc := gen.Residue(c)
		s.owed = &rc
	}
	return c
}

// Stream returns the campaign's stream of cases of op under relation
// seeded with seed (math/rand, as each pair's stream is; the campaign
// seeds pair i with inputs.Splitmix(Seed ^ inputs.Splitmix(i+1))): each call returns the
// next case, exactly as a campaign's pair draws it (drawSized's draws and
// their residue cases), with Targets empty. Package detect measures
// detection power on it.
func Stream(seed int64, op spec.Op, relation string) func() spec.Case {
	st := &stream{rng: rand.New(rand.NewSource(seed))}
	return func() spec.Case { return st.next(op, relation) }
}

// drawSized draws from gen.Case: a small draw takes the first case with
// casecost.Of <= casecost.SmallOf(op) (of at most 64); a big draw (one in casecost.BigEvery)
// collects up to 8 of gen's medium or big cases (gen.Work > gen.SmallWork)
// with casecost.Of <= casecost.Big (of at most 512 draws) and takes the most
// balanced one (casecost.Balance): gen's budget trades the batch size against the
// row size, while dispatch thresholds want both large at once (256 tokens
// of a 1024-wide RMSNorm, 132 requests of a 65-token KV cache). When
// nothing fits, the cheapest case drawn. The shapes keep gen's bias; only
// their cost is bounded. big says which draw it was.
func drawSized(r *rand.Rand, op spec.Op, relation string) (spec.Case, bool) {
	small := casecost.SmallOf(op)
	big := r.Intn(casecost.BigEvery) == 0
	var cheap, best spec.Case
	cheapCost, bestBal, found := int64(-1), -1, 0
	for i := 0; i < 512 && (big || i < 64); i++ {
		c := gen.Case(r, op, relation)
		cost := casecost.Of(c)
		if !big && cost <= small {
			return c, false
		}
		if big && cost <= casecost.Big && gen.Work(c) > gen.SmallWork {
			if b := casecost.Balance(c); b > bestBal {
				best, bestBal = c, b
			}
			if found++; found == 8 {
				break
			}
		}
		if cheapCost < 0 || cost < cheapCost {
			cheap, cheapCost = c, cost
		}
	}
	if found > 0 {
		return best, big
	}
	return cheap, big
}
