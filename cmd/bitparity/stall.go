package main

import (
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/spec"
)

// runStalls says why a run's verdict is STALLED (exit 5), or nil: a
// target that stopped answering (res.Stalls), or one that ran fewer than
// minCases cases. With minCases 0 only the worker and external targets
// (--kernel, --exec; names in procs) have a minimum, of one case; other
// targets have none.
func runStalls(res *spec.Result, minCases int64, procs []string) []string {
	out := append([]string(nil), res.Stalls...)
	for _, ts := range res.Targets {
		min := minCases
		if min == 0 && slices.Contains(procs, ts.Target) {
			min = 1
		}
		if ts.Cases < min {
			out = append(out, fmt.Sprintf("%s: %d case(s) run, fewer than the minimum of %d", ts.Target, ts.Cases, min))
		}
	}
	for _, name := range procs {
		if !slices.ContainsFunc(res.Targets, func(ts spec.TargetStats) bool { return ts.Target == name }) {
			out = append(out, fmt.Sprintf("%s: no case run", name))
		}
	}
	return out
}
