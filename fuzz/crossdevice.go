package fuzz

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/spec"
)

// Replicated is a target that can run on every device of the host: the GPU
// targets (package gpu) implement it. The cross_device relation compares
// its replicas; any other target runs on one device.
type Replicated interface {
	Target
	// Replicas returns the same target (same kernel, same schedule policy)
	// once per device of the host, the receiver's own device first; each
	// replica's Info().Device names its device.
	Replicas() ([]Target, error)
}

// crossDevice: the same target on the same batch gives the same bits on
// every device of the host (other SM count, clocks or driver state must not
// change a bit). With replicas d0, d1, ..., dn-1 it checks
//
//	for i := 1; i < n; i++ { out(d0) == out(di) on every row }
//
// comparing on the host (the outputs live on different devices). With one
// device (one GPU visible, or a target that is not Replicated) it
// degenerates to determinism (the same call twice on d0), and its findings
// say so.
type crossDevice struct{}

func (crossDevice) Name() string   { return spec.RelCrossDevice }
func (crossDevice) Ops() []spec.Op { return spec.Ops }
func (crossDevice) Targets() int   { return 1 }

// pairOnly marks a relation that Pairs never adds to a target by itself: a
// package registers its pairs (RegisterPair) for the targets it applies to.
func (crossDevice) pairOnly() {}

func init() { relations = append(relations, crossDevice{}) }

// CrossDevices returns the replicas cross_device compares for target t,
// one per device (Info().Device names it): t alone when t is not
// Replicated. One replica means the relation only checks determinism.
func CrossDevices(t Target) ([]Target, error) {
	rt, ok := t.(Replicated)
	if !ok {
		return []Target{t}, nil
	}
	rs, err := rt.Replicas()
	if err != nil {
		return nil, &targetError{target: t.Info().Name, err: fmt.Errorf("replicas: %w", err)}
	}
	if len(rs) == 0 {
		return nil, &targetError{target: t.Info().Name, err: fmt.Errorf("replicas: none")}
	}
	return rs, nil
}

func (crossDevice) Check(ctx context.Context, c spec.Case, b *Batch, ts []Target) (*spec.Finding, error) {
	dt, err := compareDType(c)
	if err != nil {
		return nil, err
	}
	reps, err := CrossDevices(ts[0])
	if err != nil {
		return nil, err
	}
	n := b.Items()
	rows := identity(b.Rows())
	on := func(t Target, what string) (*run, error) {
		r, err := execute(ctx, t, b, identity(n), what)
		if err != nil {
			return nil, err
		}
		// The outputs live on different devices: compare on the host.
		if r.out.Device != nil || r.out.DeviceTaps != nil {
			err := r.out.ToHost()
			r.release()
			r.out.Device, r.out.DeviceTaps = nil, nil
			if err != nil {
				return nil, &targetError{target: t.Info().Name, err: fmt.Errorf("%s: %w", what, err)}
			}
		}
		return r, nil
	}
	ref, err := on(reps[0], "on "+reps[0].Info().Device)
	if err != nil {
		return nil, err
	}
	if len(reps) == 1 {
		again, err := on(reps[0], "again on "+reps[0].Info().Device)
		if err != nil {
			return nil, err
		}
		f, err := differ(ctx, ref, again, rows, rows, dt, 0)
		if f != nil {
			f.Message = fmt.Sprintf("only one device visible (%s): %s checked determinism (the same call twice); ", reps[0].Info().Device, spec.RelCrossDevice) + f.Message
		}
		return f, err
	}
	for _, t := range reps[1:] {
		o, err := on(t, "on "+t.Info().Device)
		if err != nil {
			return nil, err
		}
		f, err := differ(ctx, ref, o, rows, rows, dt, 0)
		if f != nil || err != nil {
			return f, err
		}
	}
	return nil, nil
}

// isPairOnly reports whether Pairs leaves rel to registered pairs.
func isPairOnly(rel Relation) bool {
	_, ok := rel.(interface{ pairOnly() })
	return ok
}
