// Package layers holds rules of the repository as tests: which package of
// bitparity may import which (docs/architecture.md explains the layers),
// that docs/architecture.md's package table is what go list says
// (TestLayerTable, -update rewrites it), and which files may switch on an
// op (the rest read spec's op table). It has no code of its own.
package layers
