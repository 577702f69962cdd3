package fuzz

import (
	"strings"
	"sync"

	"github.com/bitparity/bitparity/spec"
)

// Pair is one (relation, targets) combination a campaign runs: a single
// target under a one-target relation, or two targets that must agree.
type Pair struct {
	Op       spec.Op
	Relation string
	Targets  []string
	// Expect is true when the pair holds a drift model (a negative control)
	// that this relation must find; false when the pair must hold.
	Expect bool
}

// String is "relation target[,target]".
func (p Pair) String() string { return p.Relation + " " + strings.Join(p.Targets, ",") }

var (
	pairMu     sync.Mutex
	extraPairs []Pair
)

// RegisterPair adds a two-target pair (path or logprob parity) to the ones
// Pairs lists; packages that register targets call it from init.
func RegisterPair(p Pair) {
	pairMu.Lock()
	defer pairMu.Unlock()
	extraPairs = append(extraPairs, p)
}

// The two-target pairs of the CPU targets.
func init() {
	RegisterPair(Pair{Op: spec.OpAttnPrefill, Relation: spec.RelPathParity,
		Targets: []string{OracleName(spec.OpAttnPrefill), OracleName(spec.OpAttnDecode)}})
	RegisterPair(Pair{Op: spec.OpAttnPrefill, Relation: spec.RelPathParity,
		Targets: []string{OracleName(spec.OpAttnPrefill), "drift-attn-tile48"}, Expect: true})
	RegisterPair(Pair{Op: spec.OpLogProb, Relation: spec.RelLogProbParity,
		Targets: []string{"drift-logprob-train-bf16", OracleName(spec.OpLogProb)}, Expect: true})
	RegisterPair(Pair{Op: spec.OpLogProb, Relation: spec.RelLogProbParity,
		Targets: []string{OracleName(spec.OpLogProb), "drift-logprob-zerofill"}, Expect: true})
}

// Pairs lists what a campaign runs over the targets of this build that are
// available here (a target whose factory fails is left out):
//
//   - every invariant target under every one-target relation of its op
//     (batch invariance, padding, oracle parity, determinism), except
//     the oracle targets under oracle parity (true by construction);
//   - every drift model under the one-target relations of its Info.Expect;
//   - the registered two-target pairs whose targets are all available
//     (prefill vs decode, tile 64 vs tile 48, train vs inference log-probs).
//
// The order is stable: single-target pairs by target name and relation
// order, then the registered pairs in registration order.
func Pairs() []Pair {
	var ps []Pair
	avail := map[string]bool{}
	for _, name := range Names() {
		t, err := Lookup(name)
		if err != nil {
			continue
		}
		avail[name] = true
		info := t.Info()
		for _, rel := range relations {
			if rel.Targets() != 1 || !hasOp(rel.Ops(), info.Op) || isPairOnly(rel) {
				continue
			}
			expect := contains(info.Expect, rel.Name())
			if rel.Name() == spec.RelOracleParity && name == OracleName(info.Op) {
				continue // the oracle against itself: true by construction
			}
			if info.Invariant || expect {
				ps = append(ps, Pair{Op: info.Op, Relation: rel.Name(), Targets: []string{name}, Expect: expect})
			}
		}
	}
	pairMu.Lock()
	extra := append([]Pair(nil), extraPairs...)
	pairMu.Unlock()
	for _, p := range extra {
		ok := true
		for _, t := range p.Targets {
			ok = ok && avail[t]
		}
		if ok {
			ps = append(ps, p)
		}
	}
	return ps
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
