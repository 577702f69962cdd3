package main

import (
	"flag"
	"strings"

	"github.com/bitparity/bitparity/fuzz/external"
)

// execList is the repeatable --exec flag: command lines of external
// targets speaking docs/protocol.md.
type execList []string

func (e *execList) String() string     { return strings.Join(*e, "; ") }
func (e *execList) Set(v string) error { *e = append(*e, v); return nil }

func runExecFlags(fs *flag.FlagSet) *execList {
	var e execList
	fs.Var(&e, "exec", "an external target: a command line speaking docs/protocol.md, started once and reused (repeatable); an adapter's attn_prefill and attn_decode together also run prefill vs decode")
	return &e
}

// start starts each external process (fuzz/external.AddAll) and returns
// the registered target names; external.CloseAll ends them.
func (e *execList) start() ([]string, error) {
	if len(*e) == 0 {
		return nil, nil
	}
	names, err := external.AddAll(*e, external.Options{})
	if err != nil {
		return nil, usageErr("run: --exec: %v", err)
	}
	return names, nil
}
