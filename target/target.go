package target

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// ErrUnsupported is wrapped by a target's Run error when the target does
// not implement the batch at all (a dtype or shape it has no kernel for).
// It is neither a finding nor a failure: the campaign skips the case and
// does not count it.
var ErrUnsupported = errors.New("batch not supported by this target")

// ErrTargetCrashed is wrapped by a target's Run error when the target
// faulted, hung or answered garbage (a process that died, a GPU fault): the
// relation then reports a finding of kind "crash" instead of failing.
var ErrTargetCrashed = errors.New("target crashed")

// MaxULPBound is the largest ULPBound a process target may declare: less
// than the ulps from 0 to the largest finite value of every output dtype
// (oracle.FiniteULPs: 31743 for fp16, the fewest), so that a bound never
// holds 0 equal to the largest finite value.
const MaxULPBound = 31742

// CheckULPBound returns an error when b, an ulp bound a target declares (a
// process target's hello, a user kernel's manifest), exceeds MaxULPBound:
// such a bound holds 0 equal to the largest finite fp16 value, so it
// bounds nothing. Every declared bound is checked here.
func CheckULPBound(b uint64) error {
	if b > MaxULPBound {
		return fmt.Errorf("%d ulps is no bound: at most %d, fewer than the %d from 0 to the largest finite fp16 value",
			b, MaxULPBound, oracle.FiniteULPs(oracle.FP16))
	}
	return nil
}

// Info describes a target for `bitparity list` and for reports.
type Info struct {
	Name string
	Op   spec.Op
	// Device is "cpu", "cuda:N", "process", ...
	Device string
	// Invariant is true when the target claims every relation holds
	// (batch invariance, padding, determinism). Drift models are false:
	// they are negative controls and must be found.
	Invariant bool
	// Schedule, when the target declares one, is the oracle schedule it
	// implements bit for bit; oracle parity is then bitwise. Empty means
	// oracle parity is an ulp bound (ULPBound, at most MaxULPBound; an
	// infinity or a NaN against another value is never within it).
	Schedule string
	ULPBound uint64
	// Models says which real kernel behaviour a drift model reproduces and
	// where that fact comes from.
	Models string
	// Expect lists the relations a drift model (a negative control) must
	// be found by; empty for invariant targets.
	Expect []string
	// OnRequest marks a scan control (drift_rows.go): a campaign runs it
	// only where its --targets names it, never by default and not in the
	// conformance suite, because its drift starts at batch sizes and
	// positions (row 299 of 300, the second wave past 264 rows) that a
	// default campaign's draws reach too rarely for its verdict to
	// expect it; `bitparity scan` maps it exactly.
	OnRequest bool
	// Layouts says the target reads Batch.Layout (a chunked prefill, a
	// paged decode's page size); only such targets are scanned over the
	// chunk and page dimensions, where a target that ignores the layout
	// would be certified for a layout it never ran.
	Layouts bool
}

// Target is an implementation of one op that can run a batch.
type Target interface {
	Info() Info
	// Run computes the selected rows of b (all rows when rows is nil).
	Run(ctx context.Context, b *Batch, rows []int) (*Output, error)
}

// Factory makes a target; it may fail when the target is not available in
// this build or on this machine.
type Factory func() (Target, error)

var (
	regMu    sync.Mutex
	registry = builtin() // the CPU targets; Register adds a build's or a run's own
	made     = map[string]Target{}
)

// builtin is the registry of the CPU targets every build has: the oracle
// targets (oracle.go) and the drift models (drift.go, drift_rows.go).
func builtin() map[string]Factory {
	r := map[string]Factory{}
	for _, t := range slices.Concat(oracleTargets(), driftModels(), rowDriftModels(), attnDriftModels()) {
		r[t.Info().Name] = func() (Target, error) { return t, nil }
	}
	return r
}

// Register adds a target factory under name. It panics on a duplicate name
// (programmer misuse).
func Register(name string, f Factory) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("target: registered twice: " + name)
	}
	registry[name] = f
}

// Names lists the registered target names, sorted.
func Names() []string {
	regMu.Lock()
	defer regMu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Registered reports whether a target is registered under name (its
// factory not yet asked).
func Registered(name string) bool {
	regMu.Lock()
	defer regMu.Unlock()
	_, ok := registry[name]
	return ok
}

// Lookup returns the target registered under name, made by its factory on
// the first successful call and the same one after (a factory that fails,
// for want of a GPU say, is asked again next time).
func Lookup(name string) (Target, error) {
	regMu.Lock()
	if t, ok := made[name]; ok {
		regMu.Unlock()
		return t, nil
	}
	f, ok := registry[name]
	regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown target %q (bitparity list shows the targets of this build)", name)
	}
	t, err := f()
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	regMu.Lock()
	if prev, ok := made[name]; ok {
		t = prev
	} else {
		made[name] = t
	}
	regMu.Unlock()
	return t, nil
}
