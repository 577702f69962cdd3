package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// execList is the repeatable --exec flag: command lines of external
// targets speaking docs/protocol.md.
type execList []string

func (e *execList) String() string     { return strings.Join(*e, "; ") }
func (e *execList) Set(v string) error { *e = append(*e, v); return nil }

// execFlags are run's --exec, --exec-timeout and --exec-start-timeout.
type execFlags struct {
	list    execList
	timeout time.Duration
	startTO time.Duration
}

func runExecFlags(fs *flag.FlagSet) *execFlags {
	e := &execFlags{}
	fs.Var(&e.list, "exec", "an external target: a command line speaking docs/protocol.md, started once and reused (repeatable); an adapter's attn_prefill and attn_decode together also run prefill vs decode")
	fs.DurationVar(&e.timeout, "exec-timeout", 0, "bound of one request to an --exec target; a request past it is a hang (a crash finding). 0: adaptive, 20x the target's slowest answer so far, at least 10s")
	fs.DurationVar(&e.startTO, "exec-start-timeout", external.DefaultStartTimeout, "bound of an --exec adapter's start and hello (importing torch, initialising CUDA); an adapter silent past it is refused. Ctrl-C ends a start at once")
	return e
}

// start starts each external process (fuzz/external.AddAll) and returns
// the registered target names; external.CloseAll ends them. cmd names the
// command in errors. When ctx ends during a start (Ctrl-C), the adapter's
// process group is killed at once and the error says so (exit 3).
func (e *execFlags) start(ctx context.Context, cmd string) ([]string, error) {
	if e.timeout < 0 {
		return nil, usageErr("%s: --exec-timeout %s: want a positive duration, or 0 for the adaptive default", cmd, e.timeout)
	}
	if e.startTO <= 0 {
		return nil, usageErr("%s: --exec-start-timeout %s: want a positive duration", cmd, e.startTO)
	}
	if len(e.list) == 0 {
		return nil, nil
	}
	names, err := external.AddAll(ctx, e.list, e.options())
	if err != nil {
		if ctx.Err() != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("%s: --exec: %w", cmd, err))
		}
		return nil, usageErr("%s: --exec: %v", cmd, err)
	}
	return names, nil
}

// options are the external.Options the flags set.
func (e *execFlags) options() external.Options {
	return external.Options{Timeout: e.timeout, StartTimeout: e.startTO}
}

// recordAdapters writes into res the adapters of the external targets
// names (their hello and command line, which case files keep), and gives
// each finding on an external target a repro line with its --exec flags.
func recordAdapters(res *spec.Result, names []string) {
	res.Adapters = external.Adapters(names...)
	for i := range res.Findings {
		f := &res.Findings[i]
		if execs := external.Commands(f.Case.Targets...); len(execs) > 0 {
			f.Repro = spec.ReproLine(f.Case, execs...)
		}
	}
}

// missingAdapters says, one line per exec: target of c that no --exec
// started, which adapter to pass: the command line recorded with the case
// when there is one (quoted, for the user to check and pass; it is never
// run from the file).
func missingAdapters(c spec.Case, recorded []spec.Adapter) []string {
	var out []string
	for _, t := range c.Targets {
		if !strings.HasPrefix(t, "exec:") || slices.Contains(target.Names(), t) || external.IsModel(t) {
			continue
		}
		i := slices.IndexFunc(recorded, func(a spec.Adapter) bool { return a.Target == t })
		if i < 0 {
			out = append(out, fmt.Sprintf("target %s is an external adapter and none was recorded with the case: pass --exec with the command line of the adapter whose hello names %q", t, strings.TrimPrefix(t, "exec:")))
			continue
		}
		a := recorded[i]
		out = append(out, fmt.Sprintf("target %s is an external adapter (%s on %s): pass --exec %s, the command line recorded with the case; read it first, bitparity never runs a command from a case file",
			t, a.Name, a.Device, spec.ShellQuote(a.Exec)))
	}
	return out
}

// adapterDiff lists how the adapters running c's targets here differ from
// the recorded ones: "adapter exec:torch.gemm: about: recorded ..., here ...".
func adapterDiff(recorded []spec.Adapter) []string {
	var out []string
	for _, r := range recorded {
		here := external.Adapters(r.Target)
		if len(here) == 0 {
			continue
		}
		h := here[0]
		for _, d := range [][3]string{{"device", r.Device, h.Device}, {"about", r.About, h.About}, {"exec", r.Exec, h.Exec}} {
			if d[1] != d[2] {
				out = append(out, fmt.Sprintf("adapter %s: %s: recorded %q, here %q", r.Target, d[0], d[1], d[2]))
			}
		}
	}
	return out
}

// recheckAdapters refuses (exit 2) a recheck of s when a case it would
// replay (corpus.Rechecks, all as given) runs on an exec: target that no
// --exec started: a recheck without its adapter could not tell fixed from
// not run. The error names each case and the command line recorded with it.
func recheckAdapters(s corpus.Store, all bool) error {
	names, err := s.List()
	if err != nil {
		return err
	}
	var lines []string
	for _, n := range names {
		f, err := s.Get(n)
		if err != nil || !corpus.Rechecks(f, all) {
			continue // an unreadable file is reported by the recheck itself
		}
		for _, m := range missingAdapters(f.Case, f.Adapters) {
			lines = append(lines, n+": "+m)
		}
	}
	if len(lines) > 0 {
		return usageErr("corpus recheck: %d case(s) need an adapter; nothing was rechecked:\n  %s", len(lines), strings.Join(lines, "\n  "))
	}
	return nil
}
