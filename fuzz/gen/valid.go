package gen

import "github.com/bitparity/bitparity/spec"

// Elements returns the input values the relation of c materializes:
// spec.Case.Elements, which callers should use (cmd/bitparity's repro
// still calls this one).
func Elements(c spec.Case) int { return c.Elements() }
