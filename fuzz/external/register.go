package external

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

var (
	openMu   sync.Mutex
	open     []*Target             // targets started through this file, for CloseAll
	clones   []*Target             // their further processes (clone.go), for CloseAll; never looked up
	cmdlines = map[string]string{} // registered name -> command line
)

func track(t *Target) {
	openMu.Lock()
	open = append(open, t)
	openMu.Unlock()
}

func trackClone(t *Target) {
	openMu.Lock()
	clones = append(clones, t)
	openMu.Unlock()
}

func remember(name, cmdline string) {
	openMu.Lock()
	cmdlines[name] = cmdline
	openMu.Unlock()
}

// Commands returns the command lines that started the named targets, for
// the external ones among them (those of Register, Add and AddAll), in
// order; none when none is external. A repro line of a finding on an
// external target passes them as --exec flags: spec.ReproLine(c,
// Commands(c.Targets...)...).
func Commands(names ...string) []string {
	openMu.Lock()
	defer openMu.Unlock()
	var out []string
	for _, n := range names {
		if cl, ok := cmdlines[n]; ok {
			out = append(out, cl)
		}
	}
	return out
}

// Stalls lists, for every target that Register, Add or AddAll started (and
// their clones) that stopped answering (Target.Stalled), its name and why.
func Stalls() []string {
	openMu.Lock()
	ts := append(append([]*Target(nil), open...), clones...)
	openMu.Unlock()
	var out []string
	for _, t := range ts {
		if s := t.Stalled(); s != "" {
			out = append(out, t.Info().Name+": "+s)
		}
	}
	return out
}

// CloseAll closes every target that Register, Add or AddAll started. An
// adapter also exits on its own when the harness exits (its stdin closes).
func CloseAll() {
	openMu.Lock()
	ts := append(append([]*Target(nil), open...), clones...)
	open, clones = nil, nil
	openMu.Unlock()
	for _, t := range ts {
		t.Close()
	}
}

// Register adds an external target to the fuzz registry under name, started
// lazily: the first target.Lookup(name) starts cmdline and performs the
// handshake (New with op, possibly empty, and opts, the target named name);
// every later Lookup returns the same target, so one process serves the
// whole campaign. A failed start is remembered and returned by every
// Lookup. It panics on a duplicate name, as target.Register does.
func Register(name, cmdline string, op spec.Op, opts Options) {
	opts.Name = name
	remember(name, cmdline)
	var once sync.Once
	var t *Target
	var err error
	target.Register(name, func() (target.Target, error) {
		once.Do(func() {
			if t, err = New(cmdline, op, opts); err == nil {
				track(t)
			}
		})
		if err != nil {
			return nil, err
		}
		return t, nil
	})
}

// Add is AddContext with a context that is never canceled.
func Add(cmdline string, op spec.Op, opts Options) (*Target, error) {
	return AddContext(context.Background(), cmdline, op, opts)
}

// AddContext starts cmdline, performs the handshake (NewContext: ctx ends a
// stuck start at once), and registers the running target in the fuzz
// registry under its name (opts.Name, or exec:NAME from the adapter's
// hello); target.Lookup returns this same target. An adapter of an op
// package's op (moe_route, moe_router, quant_fp8) is registered with the
// op packages' targets instead (ops/all.Lookup returns its OpTarget), so
// that `scan` and `run` take it as they take the op's CPU targets.
func AddContext(ctx context.Context, cmdline string, op spec.Op, opts Options) (*Target, error) {
	t, err := NewContext(ctx, cmdline, op, opts)
	if err != nil {
		return nil, err
	}
	if err := register(t, cmdline); err != nil {
		return nil, err
	}
	return t, nil
}

// register is AddContext's registration of t, started from cmdline; on
// error t is closed.
func register(t *Target, cmdline string) error {
	name := t.Info().Name
	if t.op == HelloModel {
		return addModel(t, name, cmdline)
	}
	if op, ok := wireOp(t.op); ok {
		if _, dup := all.Lookup(name); dup {
			t.Close()
			return fmt.Errorf("external target %q: a target named %s is already registered (set a name)", cmdline, name)
		}
		track(t)
		remember(name, cmdline)
		all.RegisterDevice(&OpTarget{t: t, op: op})
		return nil
	}
	for _, n := range target.Names() {
		if n == name {
			t.Close()
			return fmt.Errorf("external target %q: a target named %s is already registered (set a name)", cmdline, name)
		}
	}
	track(t)
	remember(name, cmdline)
	target.Register(name, func() (target.Target, error) { return t, nil })
	return nil
}

// addModel registers t, a model route, under name (LookupModel).
func addModel(t *Target, name, cmdline string) error {
	modelsMu.Lock()
	defer modelsMu.Unlock()
	if _, dup := models[name]; dup {
		t.Close()
		return fmt.Errorf("external target %q: a model route named %s is already started (set a name)", cmdline, name)
	}
	models[name] = &Model{t: t}
	track(t)
	remember(name, cmdline)
	return nil
}

// AddAll is what `bitparity run --exec CMD` (repeatable) does: it adds each
// command line (AddContext, op from the adapter's hello; the processes
// started all at once, with their spares when opts.Prestart) and returns
// the target names in order. When one adapter serves both attention forms (the same
// adapter name before the op, e.g. torch_ops.py attn_prefill and
// torch_ops.py attn_decode), it also registers the pair prefill vs decode
// under path parity. On error (ctx's end among them: it stops a start at
// once) the targets already started are closed.
func AddAll(ctx context.Context, cmdlines []string, opts Options) ([]string, error) {
	ts, err := startAll(ctx, cmdlines, opts)
	if err != nil {
		return nil, err
	}
	for i, t := range ts {
		if err := register(t, cmdlines[i]); err != nil {
			for j, s := range ts {
				s.spares.drop()
				if j != i { // register closed t
					s.Close()
				}
			}
			return nil, err
		}
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Info().Name
	}
	for _, p := range ts {
		for _, d := range ts {
			// a prefill and a decode of one adapter: the ops of a path (ops.CaseOp.PathNext)
			k, ok := all.Case(p.Info().Op)
			if ok && k.PathNext() != "" && d.Info().Op == k.PathNext() && adapterBase(p) == adapterBase(d) {
				target.RegisterPair(target.Pair{Op: k.Name(), Relation: spec.RelPathParity,
					Targets: []string{p.Info().Name, d.Info().Name}})
			}
		}
	}
	return names, nil
}

// adapterBase is the adapter's name without its op suffix ("torch" for
// "torch.attn_decode").
func adapterBase(t *Target) string {
	n := t.hello["name"]
	return strings.TrimSuffix(n, "."+t.hello["op"])
}

// NotBuilt says, for each target of c that this build has neither
// registered (target.Names) nor started as a model route, that it is not
// in this build, and where to get it: a GPU target needs the cuda build on
// a machine with a GPU; any other is one 'bitparity list' would show.
func NotBuilt(c spec.Case) []string {
	have := map[string]bool{}
	for _, n := range target.Names() {
		have[n] = true
	}
	var out []string
	for _, t := range c.Targets {
		if _, op := all.Lookup(t); have[t] || op || IsModel(t) {
			continue
		}
		hint := "see 'bitparity list'"
		if strings.HasPrefix(t, "cuda") || strings.HasPrefix(t, "gpu") || strings.HasPrefix(t, "cublas") {
			hint = "a GPU target: build with -tags cuda on a machine with a GPU (make build)"
		}
		out = append(out, fmt.Sprintf("target %s: not in this build (%s)", t, hint))
	}
	return out
}

// Lookup returns the adapter process of the started target called name,
// an external target of the fuzz registry or an op package's OpTarget
// alike (those of Add, AddAll and a started Register target).
func Lookup(name string) (*Target, bool) {
	openMu.Lock()
	defer openMu.Unlock()
	for _, t := range open {
		if t.info.Name == name {
			return t, true
		}
	}
	return nil, false
}
