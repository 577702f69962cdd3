package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bitparity/bitparity/fuzz/external/workers"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
)

// workerFlags are run's --kernel, --kernel-any-path and --isolate.
type workerFlags struct {
	kernels, isolate *string
	paths            *kernelPaths
}

// runWorkerFlags adds --kernel, --kernel-any-path and --isolate to run's flags.
func runWorkerFlags(fs *flag.FlagSet) *workerFlags {
	return &workerFlags{
		kernels: fs.String("kernel", "", "fuzz the user kernel of this manifest (comma-separated for several; docs/kernel-abi.md) with every relation of its op, in a worker subprocess"),
		isolate: fs.String("isolate", "", "comma-separated registered targets to run in worker subprocesses (as worker:NAME), so a GPU fault or hang is a crash finding; \"gpu\": every invariant GPU target (cuda-<op>, cublas-*)"),
		paths:   kernelPathFlag(fs),
	}
}

// kernelPaths is --kernel-any-path: where the files a kernel manifest
// names may be (gpu.ManifestOptions).
type kernelPaths struct{ anyPath bool }

// kernelPathFlag adds --kernel-any-path to fs.
func kernelPathFlag(fs *flag.FlagSet) *kernelPaths {
	k := &kernelPaths{}
	fs.BoolVar(&k.anyPath, "kernel-any-path", false, fmt.Sprintf("let a kernel manifest's ptx, cubin and fatbin be outside the manifest's folder (absolute paths, .., symbolic links out); they are still regular files of at most %d MiB", gpu.MaxImageBytes>>20))
	return k
}

// options are the manifest options the flag gives.
func (k kernelPaths) options() gpu.ManifestOptions { return gpu.ManifestOptions{AnyPath: k.anyPath} }

// workerArgs are the flags that pass k on to a `bitparity worker`.
func (k kernelPaths) workerArgs() []string {
	if k.anyPath {
		return []string{"--kernel-any-path"}
	}
	return nil
}

// start starts the workers of --kernel (comma-separated manifests) and
// --isolate (comma-separated targets) and returns their target names
// (workers.Start). A bad manifest or target is a usage error
// naming the field; a worker that cannot start an internal error with the
// worker's stderr. external.CloseAllWithin ends them.
func (w *workerFlags) start(stderr io.Writer) ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, withCode(spec.ExitInternal, fmt.Errorf("find this executable for the worker: %w", err))
	}
	names, err := workers.Start(spec.ShellQuote(exe)+" worker", runSplitList(*w.kernels), runSplitList(*w.isolate),
		w.paths.options(), w.paths.workerArgs(), stderr)
	var bad *workers.BadWorkerError
	switch {
	case errors.As(err, &bad):
		return names, usageErr("run %v", err)
	case err != nil:
		return names, withCode(spec.ExitInternal, fmt.Errorf("run %w", err))
	case len(names) > 0:
		fmt.Fprintf(stderr, "bitparity run: workers started for %s\n", strings.Join(names, ", "))
	}
	return names, nil
}
