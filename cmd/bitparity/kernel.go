package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
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

// start starts the workers (workerTargets) and returns their target names.
func (w *workerFlags) start(stderr io.Writer) ([]string, error) {
	return workerTargets(*w.kernels, *w.isolate, *w.paths, stderr)
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

// close ends the workers, and every other process target, waiting at
// most endWait (closeProcesses).
func (w *workerFlags) close(stderr io.Writer) { closeProcesses(stderr) }

// workerTargets starts one `bitparity worker` subprocess per user kernel
// manifest (`run --kernel FILE`, comma-separated) and per isolated target
// (`run --isolate NAME`, comma-separated), and registers each as an
// external target: kernel:NAME with the manifest's timeout as its
// watchdog, worker:NAME with the protocol's default (2 minutes). It returns
// the registered names. A bad manifest is a usage error naming the field;
// a worker that cannot start (a build without CUDA, no GPU) an internal
// error with the worker's stderr.
//
// In a worker a GPU fault or a hang kills only the worker: the campaign
// records a crash finding with the case and the error and the next case
// starts a new worker.
func workerTargets(kernels, isolate string, paths kernelPaths, stderr io.Writer) ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, withCode(spec.ExitInternal, fmt.Errorf("find this executable for the worker: %w", err))
	}
	self := spec.ShellQuote(exe) + " worker"
	var names []string
	for _, file := range runSplitList(kernels) {
		m, err := gpu.LoadManifest(file, paths.options())
		if err != nil {
			return names, usageErr("run --kernel: %v", err)
		}
		abs, err := filepath.Abs(file)
		if err != nil {
			return names, usageErr("run --kernel: %v", err)
		}
		name := "kernel:" + m.Name
		argv := append([]string{"--kernel", abs}, paths.workerArgs()...)
		if _, err := external.Add(self+" "+spec.ShellJoin(argv), m.Op, external.Options{Name: name, Timeout: m.Timeout}); err != nil {
			return names, withCode(spec.ExitInternal, fmt.Errorf("run --kernel %s: %w", file, err))
		}
		names = append(names, name)
	}
	iso := isolateList(isolate, stderr)
	if isolate != "" && len(iso) == 0 {
		return names, usageErr("run --isolate %s: no such target available here (%v)", isolate, gpu.Available())
	}
	for _, t := range iso {
		if _, err := target.Lookup(t); err != nil {
			return names, usageErr("run --isolate: %v", err)
		}
	}
	for _, t := range iso {
		name := "worker:" + t
		if _, err := external.Add(self+" --target "+spec.ShellQuote(t), "", external.Options{Name: name}); err != nil {
			return names, withCode(spec.ExitInternal, fmt.Errorf("run --isolate %s: %w", t, err))
		}
		names = append(names, name)
	}
	if len(names) > 0 {
		fmt.Fprintf(stderr, "bitparity run: workers started for %s\n", strings.Join(names, ", "))
	}
	return names, nil
}

// isolateList expands --isolate: "gpu" stands for every GPU target of this
// build that is available here and claims invariance (cuda-<op>,
// cublas-*); drift models keep running in process, since a worker's hello
// does not carry the relations a negative control must be found by.
func isolateList(s string, stderr io.Writer) []string {
	var out []string
	for _, t := range runSplitList(s) {
		if t != "gpu" {
			out = append(out, t)
			continue
		}
		for _, n := range target.Names() {
			if !strings.HasPrefix(n, "cuda-") && !strings.HasPrefix(n, "cublas-") {
				continue
			}
			tg, err := target.Lookup(n)
			if err != nil {
				fmt.Fprintf(stderr, "bitparity run: --isolate gpu: %s left out: %v\n", n, err)
				continue
			}
			if tg.Info().Invariant {
				out = append(out, n)
			}
		}
	}
	return out
}
