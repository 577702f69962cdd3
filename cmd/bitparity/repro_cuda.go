//go:build cuda

package main

import (
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
)

// A cuda build fills the GPU name of this environment (for repro's and
// recheck's environment fingerprint) from the device the GPU targets use.
func init() {
	envHooks = append(envHooks, func(e *spec.Env) {
		if d, err := gpu.Default(); err == nil {
			e.GPU = d.Name()
		}
	})
}
