package external

import (
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
)

// Register adds an external target to the fuzz registry under name: each
// fuzz.Lookup(name) starts cmdline and performs the handshake (New with
// op, possibly empty, and opts; the target is named name). It panics on a
// duplicate name, as fuzz.Register does.
func Register(name, cmdline string, op spec.Op, opts Options) {
	opts.Name = name
	fuzz.Register(name, func() (fuzz.Target, error) {
		return New(cmdline, op, opts)
	})
}
