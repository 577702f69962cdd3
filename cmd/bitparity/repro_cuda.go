//go:build cuda

package main

import (
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
)

// A cuda build fills the GPU part of this environment's fingerprint (for
// repro's environment diff and recheck's "fixed at"): the name and compute
// capability of the device the GPU targets use, the CUDA version its driver
// supports and the hash of the embedded PTX.
func init() {
	envHooks = append(envHooks, func(e *spec.Env) {
		if d, err := gpu.Default(); err == nil {
			e.GPU = d.Name()
			e.CC = d.ComputeCapability()
			e.CUDA = gpu.DriverCUDAVersion()
		}
		if h, err := gpu.KernelHash(); err == nil && e.KernelHash == "" {
			e.KernelHash = h
		}
	})
}
