package relate

import (
	"slices"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Pairs lists what a campaign runs over the targets of this build that are
// available here (a target whose factory fails is left out):
//
//   - every invariant target under every one-target relation of its op
//     (batch invariance, padding, oracle parity, determinism), except
//     the oracle targets under oracle parity (true by construction);
//   - every drift model under the one-target relations of its Info.Expect,
//     but the scan controls (target.Info.OnRequest), which only
//     PairsNaming lists;
//   - the registered two-target pairs whose targets are all available
//     (prefill vs decode, tile 64 vs tile 48, train vs inference log-probs).
//
// The order is stable: single-target pairs by target name and relation
// order, then the registered pairs in registration order.
func Pairs() []target.Pair { return PairsNaming(nil) }

// PairsNaming is Pairs with the pairs of the scan controls among names
// (target.Info.OnRequest): what a campaign whose Targets are names
// chooses from.
func PairsNaming(names []string) []target.Pair {
	var ps []target.Pair
	avail := map[string]bool{}
	for _, name := range target.Names() {
		t, err := target.Lookup(name)
		if err != nil {
			continue
		}
		avail[name] = true
		info := t.Info()
		if info.OnRequest && !slices.Contains(names, name) {
			continue
		}
		for _, rel := range relations {
			if rel.Targets() != 1 || !hasOp(rel.Ops(), info.Op) || isPairOnly(rel) {
				continue
			}
			expect := slices.Contains(info.Expect, rel.Name())
			if rel.Name() == spec.RelOracleParity && name == target.OracleName(info.Op) {
				continue // the oracle against itself: true by construction
			}
			if info.Invariant || expect {
				ps = append(ps, target.Pair{Op: info.Op, Relation: rel.Name(), Targets: []string{name}, Expect: expect})
			}
		}
	}
	for _, p := range target.RegisteredPairs() {
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
