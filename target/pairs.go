package target

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
	extraPairs = append([]Pair(nil), cpuPairs...)
)

// RegisteredPairs returns the CPU targets' pairs, then those RegisterPair
// added, in registration order.
func RegisteredPairs() []Pair {
	pairMu.Lock()
	defer pairMu.Unlock()
	return append([]Pair(nil), extraPairs...)
}

// RegisterPair adds a two-target pair (path or logprob parity) to the ones
// Pairs lists; packages that register targets call it from init.
func RegisterPair(p Pair) {
	pairMu.Lock()
	defer pairMu.Unlock()
	extraPairs = append(extraPairs, p)
}

// cpuPairs are the two-target pairs of the CPU targets.
var cpuPairs = []Pair{
	{Op: spec.OpAttnPrefill, Relation: spec.RelPathParity,
		Targets: []string{OracleName(spec.OpAttnPrefill), OracleName(spec.OpAttnDecode)}},
	{Op: spec.OpAttnPrefill, Relation: spec.RelPathParity,
		Targets: []string{OracleName(spec.OpAttnPrefill), "drift-attn-tile48"}, Expect: true},
	{Op: spec.OpLogProb, Relation: spec.RelLogProbParity,
		Targets: []string{"drift-logprob-train-bf16", OracleName(spec.OpLogProb)}, Expect: true},
	{Op: spec.OpLogProb, Relation: spec.RelLogProbParity,
		Targets: []string{OracleName(spec.OpLogProb), "drift-logprob-zerofill"}, Expect: true},
}
