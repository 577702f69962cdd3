package main

import (
	"flag"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz/external"
)

// execList is the repeatable --exec flag: command lines of external
// targets speaking docs/protocol.md.
type execList []string

func (e *execList) String() string     { return strings.Join(*e, "; ") }
func (e *execList) Set(v string) error { *e = append(*e, v); return nil }

// execFlags are run's --exec and --exec-timeout.
type execFlags struct {
	list    execList
	timeout time.Duration
}

func runExecFlags(fs *flag.FlagSet) *execFlags {
	e := &execFlags{}
	fs.Var(&e.list, "exec", "an external target: a command line speaking docs/protocol.md, started once and reused (repeatable); an adapter's attn_prefill and attn_decode together also run prefill vs decode")
	fs.DurationVar(&e.timeout, "exec-timeout", 0, "bound of one request to an --exec target; a request past it is a hang (a crash finding). 0: adaptive, 20x the target's slowest answer so far, at least 10s")
	return e
}

// start starts each external process (fuzz/external.AddAll) and returns
// the registered target names; external.CloseAll ends them.
func (e *execFlags) start() ([]string, error) {
	if e.timeout < 0 {
		return nil, usageErr("run: --exec-timeout %s: want a positive duration, or 0 for the adaptive default", e.timeout)
	}
	if len(e.list) == 0 {
		return nil, nil
	}
	names, err := external.AddAll(e.list, external.Options{Timeout: e.timeout})
	if err != nil {
		return nil, usageErr("run: --exec: %v", err)
	}
	return names, nil
}
