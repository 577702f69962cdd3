// Package workers starts the worker subprocesses of a campaign: one per
// user kernel manifest (kernel:NAME) and per isolated target
// (worker:NAME), each registered as an external target.
package workers

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// BadWorkerError is Start's error for bad input: a bad manifest
// (naming the field) or a target to isolate that is not there.
type BadWorkerError struct{ Err error }

func (e *BadWorkerError) Error() string { return e.Err.Error() }
func (e *BadWorkerError) Unwrap() error { return e.Err }

// Start starts one worker subprocess, the command line self
// (`bitparity worker`), per user kernel manifest (--kernel FILE, with
// workerArgs) and per isolated target (--target NAME), and registers
// each as an external target: kernel:NAME with the manifest's timeout as
// its watchdog, worker:NAME with the protocol's default. "gpu" among
// isolate stands for IsolatedGPU. It returns the registered names; a
// worker that cannot start (a build without CUDA, no GPU) is an error
// with the worker's stderr. In a worker a GPU fault or a hang kills only
// the worker: the campaign records a crash finding and the next case
// starts a new worker.
func Start(self string, manifests, isolate []string, opt gpu.ManifestOptions, workerArgs []string, warn io.Writer) ([]string, error) {
	var names []string
	for _, file := range manifests {
		m, err := gpu.LoadManifest(file, opt)
		if err != nil {
			return names, &BadWorkerError{fmt.Errorf("--kernel: %w", err)}
		}
		abs, err := filepath.Abs(file)
		if err != nil {
			return names, &BadWorkerError{fmt.Errorf("--kernel: %w", err)}
		}
		name := "kernel:" + m.Name
		argv := append([]string{"--kernel", abs}, workerArgs...)
		if _, err := external.Add(self+" "+spec.ShellJoin(argv), m.Op, external.Options{Name: name, Timeout: m.Timeout}); err != nil {
			return names, fmt.Errorf("--kernel %s: %w", file, err)
		}
		names = append(names, name)
	}
	var iso []string
	for _, t := range isolate {
		if t == "gpu" {
			iso = append(iso, IsolatedGPU(warn)...)
		} else {
			iso = append(iso, t)
		}
	}
	if len(isolate) > 0 && len(iso) == 0 {
		return names, &BadWorkerError{fmt.Errorf("--isolate %s: no such target available here (%v)", strings.Join(isolate, ","), gpu.Available())}
	}
	for _, t := range iso {
		if _, err := target.Lookup(t); err != nil {
			return names, &BadWorkerError{fmt.Errorf("--isolate: %w", err)}
		}
	}
	for _, t := range iso {
		name := "worker:" + t
		if _, err := external.Add(self+" --target "+spec.ShellQuote(t), "", external.Options{Name: name}); err != nil {
			return names, fmt.Errorf("--isolate %s: %w", t, err)
		}
		names = append(names, name)
	}
	return names, nil
}

// IsolatedGPU are the targets --isolate gpu stands for: every GPU target
// of this build that is available here and claims invariance (cuda-<op>,
// cublas-*); drift models keep running in process, since a worker's hello
// does not carry the relations a negative control must be found by. A GPU
// target that cannot be looked up is left out, with a line on warn.
func IsolatedGPU(warn io.Writer) []string {
	var out []string
	for _, n := range target.Names() {
		if !strings.HasPrefix(n, "cuda-") && !strings.HasPrefix(n, "cublas-") {
			continue
		}
		tg, err := target.Lookup(n)
		if err != nil {
			fmt.Fprintf(warn, "bitparity run: --isolate gpu: %s left out: %v\n", n, err)
			continue
		}
		if tg.Info().Invariant {
			out = append(out, n)
		}
	}
	return out
}
