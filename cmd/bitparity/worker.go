package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// workerCmd is `bitparity worker --target NAME` or `bitparity worker
// --kernel MANIFEST`: it runs one target in this process and serves it to
// a harness over stdin and stdout with the process protocol
// (docs/protocol.md, external.Serve); with --scan (and --kernel) it runs
// the one scan its parent `scan --kernel` sends instead (scan.Serve). A fault of the target (an illegal
// address, a sticky CUDA error) ends the worker with exit status 3 and the
// error on stderr; the harness reports a crash finding with the case and
// starts a new worker. A hang is ended by the harness's watchdog.
func workerCmd(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("worker", stderr, "")
	name := fs.String("target", "", "serve this registered target")
	kernel := fs.String("kernel", "", "serve the user kernel of this manifest (docs/kernel-abi.md)")
	paths := kernelPathFlag(fs)
	scanMode := fs.Bool("scan", false, "with --kernel: run the one scan sent on stdin and write its events to stdout (scan --kernel starts it)")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if (*name == "") == (*kernel == "") || fs.NArg() > 0 {
		return usageErr("worker: give exactly one of --target NAME or --kernel MANIFEST")
	}
	if *scanMode && *kernel == "" {
		return usageErr("worker: --scan goes with --kernel MANIFEST")
	}
	var t target.Target
	var err error
	if *kernel != "" {
		var m *gpu.Manifest
		if m, err = gpu.LoadManifest(*kernel, paths.options()); err != nil {
			return usageErr("worker: %v", err)
		}
		t, err = gpu.NewUserKernel(m)
	} else {
		t, err = target.Lookup(*name)
	}
	if err != nil {
		return withCode(spec.ExitInternal, fmt.Errorf("worker: %w", err))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *scanMode {
		// the scan looks its target up by name: register this one here
		target.Register(t.Info().Name, func() (target.Target, error) { return t, nil })
		if err := scan.Serve(ctx, os.Stdin, stdout); err != nil {
			return withCode(spec.ExitInternal, fmt.Errorf("worker %s: %w", t.Info().Name, err))
		}
		return nil
	}
	if err := external.Serve(ctx, os.Stdin, stdout, t); err != nil {
		return withCode(spec.ExitInternal, fmt.Errorf("worker %s: %w", t.Info().Name, err))
	}
	return nil
}
