package target

import (
	"strings"
	"sync"

	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/ops/logprob"
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
	{Op: attention.Prefill{}.Name(), Relation: spec.RelPathParity,
		Targets: []string{OracleName(attention.Prefill{}.Name()), OracleName(attention.Decode{}.Name())}},
	{Op: attention.Prefill{}.Name(), Relation: spec.RelPathParity,
		Targets: []string{OracleName(attention.Prefill{}.Name()), "drift-attn-tile48"}, Expect: true},
	{Op: logprob.Op{}.Name(), Relation: spec.RelLogProbParity,
		Targets: []string{"drift-logprob-train-bf16", OracleName(logprob.Op{}.Name())}, Expect: true},
	{Op: logprob.Op{}.Name(), Relation: spec.RelLogProbParity,
		Targets: []string{OracleName(logprob.Op{}.Name()), "drift-logprob-zerofill"}, Expect: true},
}
