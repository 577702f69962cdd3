package gen

import (
	"github.com/bitparity/bitparity/spec"
	"github.com/leanovate/gopter"
)

// The gopter adapters of the property tests: Case as a generator whose
// shrinker walks Simpler, so that gopter's shrinking keeps a case valid
// (gopter's Map and FlatMap would drop the shrinkers of the parts).

// caseGen returns a gopter generator of valid cases of op under relation
// (drawn by Case from the generator's Rng) with shrinker as its shrinker.
func caseGen(op spec.Op, relation string) gopter.Gen {
	return func(p *gopter.GenParameters) *gopter.GenResult {
		return gopter.NewGenResult(Case(p.Rng, op, relation), shrinker)
	}
}

// shrinker is the gopter shrinker of spec.Case values: the stream of
// Simpler(c). gopter takes the first candidate that still fails and
// shrinks again from there.
func shrinker(v interface{}) gopter.Shrink {
	c, ok := v.(spec.Case)
	if !ok {
		return gopter.NoShrink
	}
	cands := Simpler(c)
	i := 0
	return func() (interface{}, bool) {
		if i >= len(cands) {
			return nil, false
		}
		i++
		return cands[i-1], true
	}
}
