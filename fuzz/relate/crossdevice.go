package relate

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// crossDevice: the same target on the same batch gives the same bits on
// every device of the host (other SM count, clocks or driver state must not
// change a bit). With replicas d0, d1, ..., dn-1 it checks
//
//	for i := 1; i < n; i++ { out(d0) == out(di) on every row }
//
// comparing on the host (the outputs live on different devices). With one
// device (one GPU visible, or a target that is not Replicated) it
// degenerates to determinism (the same call twice on d0, compared where
// the outputs are, as determinism does), and its findings say so.
type crossDevice struct{}

func (crossDevice) Name() string   { return spec.RelCrossDevice }
func (crossDevice) Ops() []spec.Op { return spec.Ops }
func (crossDevice) Targets() int   { return 1 }

// pairOnly marks a relation that Pairs never adds to a target by itself: a
// package registers its pairs (RegisterPair) for the targets it applies to.
func (crossDevice) pairOnly() {}

func (crossDevice) Check(ctx context.Context, c spec.Case, b *target.Batch, ts []target.Target) (*spec.Finding, error) {
	dt, err := compareDType(c)
	if err != nil {
		return nil, err
	}
	reps, err := target.CrossDevices(ts[0])
	if err != nil {
		return nil, err
	}
	n := b.Items()
	rows := spec.Iota(b.Rows())
	on := func(t target.Target, what string) (*run, error) {
		r, err := execute(ctx, t, b, spec.Iota(n), what)
		if err != nil {
			return nil, err
		}
		// Outputs on different devices compare on the host; with one
		// device both stay where they are (differ compares them there).
		if len(reps) > 1 && (r.out.Device != nil || r.out.DeviceTaps != nil) {
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
