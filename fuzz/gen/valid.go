package gen

import "github.com/bitparity/bitparity/spec"

// BatchRows returns the size of c's batch dimension, the dimension
// relations add, move and pad rows along (spec.Case.BatchRows: Shape.Seqs
// for attn_prefill, Shape.Rows for every other op).
func BatchRows(c spec.Case) int { return c.BatchRows() }

// Valid reports whether c is a valid case: the one case contract,
// spec.Case.Validate. Generators and shrinkers only ever return valid
// cases.
func Valid(c spec.Case) error { return c.Validate() }

// Elements returns the input values the relation of c materializes
// (spec.Case.Elements).
func Elements(c spec.Case) int { return c.Elements() }
