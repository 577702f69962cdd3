package main

import (
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/target"
)

// composites are the composite ops' sources a case may need (fuzz.Check
// takes them among its targets): the end-to-end transformer (any backends
// the case names) and the model routes this run started.
func composites() []target.Target {
	return []target.Target{transformer.Source("", ""), external.ModelChecker()}
}
