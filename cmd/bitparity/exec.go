package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/spec"
)

// execFlags are run's --exec, --exec-timeout and --exec-start-timeout (and scan's --exec-procs).
type execFlags struct {
	list             multiFlag // command lines of external targets speaking docs/protocol.md
	timeout, startTO time.Duration
	procs            int
}

func runExecFlags(fs *flag.FlagSet) *execFlags {
	e := &execFlags{}
	fs.Var(&e.list, "exec", "an external target: a command line speaking docs/protocol.md, started once and reused (repeatable); an adapter's attn_prefill and attn_decode together also run prefill vs decode")
	fs.DurationVar(&e.timeout, "exec-timeout", 0, "bound of one request to an --exec target; a request past it is a hang (a crash finding). 0: adaptive, 20x the target's slowest answer so far, at least 10s")
	fs.DurationVar(&e.startTO, "exec-start-timeout", external.DefaultStartTimeout, "bound of an --exec adapter's start and hello (importing torch, initialising CUDA); an adapter silent past it is refused. Ctrl-C ends a start at once")
	return e
}

// start starts each external process (fuzz/external.AddAll) and returns the registered target names;
// external.CloseAll ends them. cmd names the command in errors. When ctx ends during a start (Ctrl-C),
// the adapter's process group is killed at once and the error says so (exit 3).
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
	// a path scan's (scan's prefill and decode) processes, spares included, all start at once
	opts := external.Options{Timeout: e.timeout, StartTimeout: e.startTO, Procs: e.procs, Prestart: cmd == "scan" && len(e.list) == 2}
	names, err := external.AddAll(ctx, e.list, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("%s: --exec: %w", cmd, err))
		}
		return nil, usageErr("%s: --exec: %v", cmd, err)
	}
	return names, nil
}
