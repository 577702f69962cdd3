// Package all is the literal list of the op packages: a new op package
// is added to Ops, and nothing else registers it.
package all

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/ops/gemm"
	"github.com/bitparity/bitparity/ops/logprob"
	"github.com/bitparity/bitparity/ops/moeroute"
	"github.com/bitparity/bitparity/ops/moerouter"
	"github.com/bitparity/bitparity/ops/quantfp8"
	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/spec"
)

// Cases lists the ops a spec.Case names, in the order of spec.Ops.
var Cases = []ops.CaseOp{
	rmsnorm.Op{},
	gemm.Op{},
	logprob.Op{},
	attention.Prefill{},
	attention.Decode{},
}

// Case returns the op package of op; ok is false for an op no package
// holds (a composite, or an unknown name).
func Case(op spec.Op) (o ops.CaseOp, ok bool) {
	for _, o := range Cases {
		if o.Name() == op {
			return o, true
		}
	}
	return nil, false
}

// Ops lists the op packages' ops.
var Ops = []ops.Op{
	moeroute.Op{},
	moerouter.Op{},
	quantfp8.Op{},
}

// Targets lists every op's CPU targets, op by op in the order of Ops.
func Targets() []ops.Target {
	var ts []ops.Target
	for _, op := range Ops {
		ts = append(ts, op.Targets()...)
	}
	return ts
}

// Lookup returns the target called name; ok is false when no op package
// has one.
func Lookup(name string) (t ops.Target, ok bool) {
	i := slices.IndexFunc(Targets(), func(t ops.Target) bool { return t.Name() == name })
	if i < 0 {
		return nil, false
	}
	return Targets()[i], true
}

// Op returns the op called name.
func Op(name string) (ops.Op, error) {
	var names []string
	for _, op := range Ops {
		if op.Record().Name == name {
			return op, nil
		}
		names = append(names, op.Record().Name)
	}
	return nil, fmt.Errorf("unknown op %q (op packages: %s)", name, strings.Join(names, ", "))
}
