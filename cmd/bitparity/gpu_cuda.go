//go:build cuda

package main

// A build with -tags cuda registers the GPU targets (cuda-<op> and
// cuda-drift-<model>) with the fuzz registry, so `bitparity run` and
// `bitparity list` include them where a GPU is found.
import _ "github.com/bitparity/bitparity/gpu"
