package main

import (
	"context"
	"io"

	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
)

// scanExecTarget starts the adapters of `scan --exec CMD` (one, or two:
// prefill and decode) and makes them the scan's target (scan.ExecTarget);
// without --exec it does nothing.
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
	if s.Target, err = scan.ExecTarget(names, stderr); err != nil {
		return usageErr("scan: %v", err)
	}
	return nil
}
