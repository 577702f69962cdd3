package transformer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/fuzz/transformer/internal/e2e"
	"github.com/bitparity/bitparity/spec"
)

// CPU is the backend that runs a path's ops on the CPU oracle.
const CPU = e2e.CPU

// Op is the op of a transformer case.
const Op = e2e.CaseOp

// Gen draws transformer cases: a small fuzzed model and a batch of requests
// of fuzzed lengths and arrivals (its zero value is valid; its fields set
// lower bounds for the drift models that need long or many tokens).
type Gen = e2e.Gen

// Request is one sequence of a transformer case: its tokens, the prompt's
// length, its arrival step and the response positions the engine reports.
type Request = e2e.Request

// Ops runs a path's reduction ops (RMSNorm, GEMM, log-prob, prefill and
// decode attention) with the schedule the path's kernel set chose; a
// backend (RegisterBackend) provides one.
type Ops = e2e.Ops

// Plan is the requests of a case: n requests of up to seqLen tokens drawn
// from seed over a vocabulary of vocab tokens.
func Plan(seed uint64, n, seqLen, vocab int) []Request { return e2e.Plan(seed, n, seqLen, vocab) }

// ReportedMask lists the response positions the engine reports: the
// positions a log-prob comparison may compare.
func ReportedMask(reqs []Request) []int { return e2e.ReportedMask(reqs) }

// WithBackends returns c with its train path on backend train and its
// inference path on backend infer ("" or CPU: the CPU oracle).
func WithBackends(c spec.Case, train, infer string) spec.Case {
	return e2e.WithBackends(c, train, infer)
}

// Backends lists the backends of this build (RegisterBackend), sorted.
func Backends() []string { return e2e.Backends() }

// RegisterBackend makes backend name available to the case targets
// "<path>:<name>/<kernels>": a build-tag plugin (the cuda build's device
// backend) calls it from its init; open is called each time a case names
// the backend and may fail (no device). It panics on a duplicate name.
func RegisterBackend(name string, open func() (Ops, error)) { e2e.RegisterBackend(name, open) }

// Paths runs both paths of transformer case c and returns their log-probs
// per response position: the train path's (rounded to the training
// dtype) and the engine's (fp32).
func Paths(ctx context.Context, c spec.Case) (train, infer []float32, err error) {
	st, err := e2e.FromCase(c)
	if err != nil {
		return nil, nil, err
	}
	tr, inf, err := st.Run(ctx, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	return tr, inf.LogProbs, nil
}

// DefaultOn is run --transformer-on's default: the trainer on the
// CPU oracle and the engine on the GPU where this build has the cuda
// backend (the two paths on different devices must still agree bitwise),
// both on the CPU otherwise.
func DefaultOn() string {
	if slices.Contains(Backends(), "cuda") {
		return "cpu,cuda"
	}
	return CPU
}

// ParseOn reads run --transformer-on: "TRAIN,INFER" or one backend
// for both paths, each one this build registered.
func ParseOn(v string) (train, infer string, err error) {
	names := strings.Split(v, ",")
	if len(names) == 1 {
		names = append(names, names[0])
	}
	if len(names) != 2 {
		return "", "", fmt.Errorf("%q: want TRAIN,INFER or one backend", v)
	}
	for _, n := range names {
		if !slices.Contains(Backends(), n) {
			return "", "", fmt.Errorf("backend %q: this build has %s", n, strings.Join(Backends(), ", "))
		}
	}
	return names[0], names[1], nil
}
