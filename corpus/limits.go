package corpus

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
)

// Limits on what one case file may hold are spec's (spec.MaxFileBytes,
// spec.MaxElements and the rest). They are checked before anything is
// allocated from a value the file claims: a file larger than
// spec.MaxFileBytes is refused before it is read, and a shape whose batches
// would need more than spec.MaxElements input values is refused before any
// tensor exists.

// fieldErr returns a *spec.FieldError naming field, e.g.
// "case.shape.rows: -1, want >= 0".
func fieldErr(field, format string, a ...any) error {
	return &spec.FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// ValidateCase checks a case read from a file: the one case contract
// (spec.Case.Validate, model-route cases included; for a case of an op
// package's op, ops.CheckCase), and that it names its targets (a case
// file is replayed on them). Errors are *spec.FieldError naming the field
// under prefix ("case.shape.rows").
func ValidateCase(prefix string, c spec.Case) error {
	var err error
	if op, ok := packageOp(c.Op); ok {
		err = ops.CheckCase(op, c)
	} else {
		err = c.Validate()
	}
	if err == nil && len(c.Targets) == 0 {
		err = &spec.FieldError{Field: "targets", Msg: fmt.Sprintf("no targets, want 1..%d", spec.MaxTargets)}
	}
	if fe := (*spec.FieldError)(nil); errors.As(err, &fe) {
		return fieldErr(prefix+"."+fe.Field, "%s", fe.Msg)
	}
	return err
}

// packageOp returns the op package of op when op is one of ops/all.Ops
// (moe_route, moe_router, quant_fp8).
func packageOp(op spec.Op) (ops.Op, bool) {
	o, err := all.Op(string(op))
	return o, err == nil
}

func validName(s string) bool { return spec.ValidName(s) }

func parseBits(s string, bits int) (uint64, error) { return spec.ParseBits(s, bits) }

func contains[T comparable](xs []T, x T) bool { return slices.Contains(xs, x) }

// truncate shortens a hostile string for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
