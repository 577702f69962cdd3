// Package all is the literal list of the op packages: a new op package
// is added to Ops, and nothing else registers it. Targets that need a
// device (the cuda build's kernels of an op) are added by their package
// with RegisterDevice.
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

// device holds the targets RegisterDevice added, in the order added.
var device []ops.Target

// RegisterDevice adds t, a target of one of Ops that runs on a device
// (gpu's cuda-moe_route), from its package's init. A second target of
// the same name, or one of an op not in Ops, panics: a programming error.
func RegisterDevice(t ops.Target) {
	if _, err := Op(t.Op().Record().Name); err != nil {
		panic(fmt.Sprintf("ops/all: register %s: %v", t.Name(), err))
	}
	if _, ok := Lookup(t.Name()); ok {
		panic(fmt.Sprintf("ops/all: target %s registered twice", t.Name()))
	}
	device = append(device, t)
}

// Targets lists every op's CPU targets, op by op in the order of Ops,
// then the device targets in the order registered.
func Targets() []ops.Target {
	var ts []ops.Target
	for _, op := range Ops {
		ts = append(ts, op.Targets()...)
	}
	return append(ts, device...)
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
