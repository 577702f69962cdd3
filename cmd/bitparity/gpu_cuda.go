//go:build cuda

package main

// A build with -tags cuda registers the GPU targets (cuda-<op> and
// cuda-drift-<model>) with the target registry (package gpu's init), so
// `bitparity run` and `bitparity list` include them where a GPU is found,
// and the transformer backend "cuda" that runs a path's ops on device 0.

import (
	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/gpu"
)

func init() {
	transformer.RegisterBackend("cuda", func() (transformer.Ops, error) {
		d, err := gpu.Default()
		if err != nil {
			return nil, err
		}
		return gpu.TransformerOps{D: d}, nil
	})
}
