package e2e

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Ops computes the reduction ops of the forward pass. Each method returns
// the fp32 rows sel (all rows when sel is nil) of its op, in order, with
// the exact bits of the oracle function of the same name under the same
// schedule: CPUOps is the oracle itself; package gpu registers "cuda",
// bitparity's CUDA kernels (which TestParity proves bitwise equal to the
// oracle). Embedding, residual adds and the MLP activation have no
// reduction and run on the host on every backend.
type Ops interface {
	RMSNorm(in oracle.RMSNormInput, s oracle.RMSNormSchedule, sel []int) ([]float32, error)
	GEMM(in oracle.GEMMInput, s oracle.GEMMSchedule, sel []int) ([]float32, error)
	LogProb(in oracle.LogProbInput, s oracle.LogProbSchedule, sel []int) ([]float32, error)
	Prefill(in oracle.PrefillInput, s oracle.AttentionSchedule, sel []int) ([]float32, error)
	Decode(in oracle.DecodeInput, s oracle.AttentionSchedule, sel []int) ([]float32, error)
}

// CPUOps runs every op on the CPU oracle.
type CPUOps struct{}

func (CPUOps) RMSNorm(in oracle.RMSNormInput, s oracle.RMSNormSchedule, sel []int) ([]float32, error) {
	return oracle.RMSNorm(in, s, sel)
}
func (CPUOps) GEMM(in oracle.GEMMInput, s oracle.GEMMSchedule, sel []int) ([]float32, error) {
	return oracle.GEMM(in, s, sel)
}
func (CPUOps) LogProb(in oracle.LogProbInput, s oracle.LogProbSchedule, sel []int) ([]float32, error) {
	return oracle.LogProb(in, s, sel)
}
func (CPUOps) Prefill(in oracle.PrefillInput, s oracle.AttentionSchedule, sel []int) ([]float32, error) {
	return oracle.Prefill(in, s, sel)
}
func (CPUOps) Decode(in oracle.DecodeInput, s oracle.AttentionSchedule, sel []int) ([]float32, error) {
	return oracle.Decode(in, s, sel)
}

// CPU is the name of the default backend, the CPU oracle.
const CPU = "cpu"

var (
	backendsMu sync.Mutex
	backends   = map[string]func() (Ops, error){CPU: func() (Ops, error) { return CPUOps{}, nil }}
)

// RegisterBackend makes a backend available by name to kernel specs
// ("<backend>/fixed..."): open is called each time a spec names it and
// may fail (no device).
func RegisterBackend(name string, open func() (Ops, error)) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if _, dup := backends[name]; dup {
		panic("transformer: backend " + name + " registered twice")
	}
	backends[name] = open
}

// Backends lists the registered backends, sorted.
func Backends() []string {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	var names []string
	for n := range backends {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func openBackend(name string) (Ops, error) {
	backendsMu.Lock()
	open, ok := backends[name]
	backendsMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("backend %q: this build has %s (the cuda backend needs a build with -tags cuda)", name, strings.Join(Backends(), ", "))
	}
	ops, err := open()
	if err != nil {
		return nil, fmt.Errorf("backend %q: %w", name, err)
	}
	return ops, nil
}

// OnBackend is a kernel set whose ops run on a named backend other than
// the CPU oracle: the schedules are Kernels', the arithmetic Ops'.
type OnBackend struct {
	Kernels
	Name string
	Ops  Ops
}

func (o OnBackend) String() string { return o.Name + "/" + o.Kernels.String() }

// planted returns the drift plant of a kernel set, on whatever backend.
func planted(k Kernels) (Planted, bool) {
	if o, ok := k.(OnBackend); ok {
		k = o.Kernels
	}
	p, ok := k.(Planted)
	return p, ok
}

// WithBackends returns c with its train path on backend train and its
// inference path on backend infer ("" or "cpu": the CPU oracle; "cuda" in
// a cuda build): each target "<path>:<kernels>" becomes
// "<path>:<backend>/<kernels>", replacing a backend it named.
func WithBackends(c spec.Case, train, infer string) spec.Case {
	targets := c.Targets
	if len(targets) == 0 {
		targets = []string{TrainPrefix + "fixed", InferPrefix + "fixed"}
	}
	c.Targets = slices.Clone(targets)
	for i, b := range []string{train, infer} {
		if i >= len(c.Targets) {
			break
		}
		path, k, ok := strings.Cut(c.Targets[i], ":")
		if !ok {
			continue // FromCase reports it
		}
		if _, rest, has := strings.Cut(k, "/"); has {
			k = rest
		}
		if b != "" && b != CPU {
			k = b + "/" + k
		}
		c.Targets[i] = path + ":" + k
	}
	return c
}

// opsOf returns the backend a kernel set runs on: CPUOps unless it is an
// OnBackend.
func opsOf(k Kernels) Ops {
	if o, ok := k.(OnBackend); ok {
		return o.Ops
	}
	return CPUOps{}
}
