package fuzz

import (
	"context"
	"sync"

	"github.com/bitparity/bitparity/spec"
)

// CheckFunc checks one case of a composite op (for example the end-to-end
// transformer of fuzz/transformer), whose relations are not the per-op
// relations of this package.
type CheckFunc func(ctx context.Context, c spec.Case) (*spec.Finding, error)

var (
	checkersMu sync.Mutex
	checkers   = map[spec.Op]CheckFunc{}
)

// RegisterChecker makes Check hand every case of op to fn, so that
// `bitparity run --case`, `bitparity repro` and corpus replay work for a
// composite op once its package is linked in. It panics on a duplicate op
// (programmer misuse).
func RegisterChecker(op spec.Op, fn CheckFunc) {
	checkersMu.Lock()
	defer checkersMu.Unlock()
	if _, dup := checkers[op]; dup {
		panic("fuzz: checker registered twice for op " + string(op))
	}
	checkers[op] = fn
}

func checkerFor(op spec.Op) CheckFunc {
	checkersMu.Lock()
	defer checkersMu.Unlock()
	return checkers[op]
}
