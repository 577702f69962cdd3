package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/target"
)

// defaultTransformerOn is --transformer-on's default: the trainer on the
// CPU oracle and the engine on the GPU where this build has the cuda
// backend (the two paths on different devices must still agree bitwise),
// both on the CPU otherwise.
func defaultTransformerOn() string {
	if slices.Contains(transformer.Backends(), "cuda") {
		return "cpu,cuda"
	}
	return transformer.CPU
}

// parseTransformerOn reads --transformer-on: "TRAIN,INFER" or one backend
// for both paths, each one this build registered.
func parseTransformerOn(v string) (train, infer string, err error) {
	names := strings.Split(v, ",")
	if len(names) == 1 {
		names = append(names, names[0])
	}
	if len(names) != 2 {
		return "", "", fmt.Errorf("%q: want TRAIN,INFER or one backend", v)
	}
	for _, n := range names {
		if !slices.Contains(transformer.Backends(), n) {
			return "", "", fmt.Errorf("backend %q: this build has %s", n, strings.Join(transformer.Backends(), ", "))
		}
	}
	return names[0], names[1], nil
}

// composites are the composite ops' sources a case may need (fuzz.Check
// takes them among its targets): the end-to-end transformer (any backends
// the case names) and the model routes this run started.
func composites() []target.Target {
	return []target.Target{transformer.Source("", ""), external.ModelChecker()}
}
