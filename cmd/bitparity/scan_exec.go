package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// scanExecTarget starts the adapter of `scan --exec CMD` (one) and makes
// it the scan's target; without --exec it does nothing. An adapter that
// predates the scan frames still scans, every step through the pipe, and
// a note on stderr says so.
func scanExecTarget(ctx context.Context, stderr io.Writer, ex *execFlags, s *spec.ScanSpec) error {
	switch {
	case len(ex.list) == 0:
		return nil
	case len(ex.list) > 2:
		return usageErr("scan: --exec given %d times: a scan takes one adapter, or two (prefill and decode)", len(ex.list))
	case s.Target != "":
		return usageErr("scan: --target %s and --exec: give the targets one way", s.Target)
	}
	names, err := ex.start(ctx, "scan")
	if err != nil {
		return err
	}
	for _, n := range names {
		if _, err := target.Lookup(n); err != nil && !(external.IsModel(n) && len(names) == 1) {
			return usageErr("scan: --exec: %v (a model route scans alone)", err)
		}
	}
	s.Target = strings.Join(names, ",")
	if len(names) > 1 {
		return nil // a path scan sends each step's batch (scan/paths.go)
	}
	t, _ := target.Lookup(s.Target)
	if et, ok := t.(*external.Target); ok && !et.Scans() {
		fmt.Fprintf(stderr, "scan: note: adapter %s predates the scan frames (its hello has no scan=%d): every step sends its whole batch through the pipe and back, which is slow at large batches; adapters built on the Python kit of this tree speak them (docs/protocol.md, Scans)\n",
			s.Target, external.ScanVersion)
	}
	return nil
}
