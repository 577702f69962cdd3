//go:build cuda

package scan

import (
	"context"
	"errors"

	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The GPU targets hold an rmsnorm batch on the device (gpu.Target.Hold)
// and an attention batch (gpu.Target.HoldAttention), and a user kernel any
// batch of its op (gpu.HoldUserKernel): a scan uploads each draw's largest
// batch once, and every step runs a prefix or a gather of the resident
// items and compares on the device.
func init() {
	holders = append(holders,
		func(t target.Target, b *target.Batch) (held, error) {
			g, ok := t.(*gpu.Target)
			if !ok {
				return nil, nil
			}
			h, err := deviceHold(g.Hold(b))
			return stepwise(g, h), err
		},
		func(t target.Target, b *target.Batch) (held, error) {
			g, ok := t.(*gpu.Target)
			if !ok {
				return nil, nil
			}
			return deviceHold(g.HoldAttention(b))
		},
		func(t target.Target, b *target.Batch) (held, error) {
			return deviceHold(gpu.HoldUserKernel(t, b))
		})
	caseHolders = append(caseHolders, holdRMSNormCase, holdUserKernelCase)
}

// holdUserKernelCase holds the largest batch of rmsnorm case c for a user
// kernel with its rows made on the device (inputs.Lazy,
// gpu.HoldUserKernel): only the weights are made on the host and
// uploaded. A case the device does not make (generator version 1,
// explicit data, the sensitive draws) is left to the host: nil, nil, nil
// or the batch made there.
func holdUserKernelCase(t target.Target, c spec.Case, pre *target.Batch) (held, *target.Batch, error) {
	if c.Op != (rmsnorm.Op{}).Name() || !gpu.IsUserKernel(t) {
		return nil, nil, nil
	}
	b, err := lazy(pre, c)
	if err != nil || !b.Lazy() {
		return nil, b, err
	}
	h, err := deviceHold(gpu.HoldUserKernel(t, b))
	if err != nil || h == nil {
		return nil, nil, err // nil, nil: the caller makes the batch on the host
	}
	return h, b, nil
}

// holdRMSNormCase holds the largest batch of case c for a GPU rmsnorm
// target with its rows made on the device (inputs.Lazy, gpu.Target.Hold):
// the scan generates no rows on the host and uploads none. A case the
// target does not generate comes back made on the host, not held.
func holdRMSNormCase(t target.Target, c spec.Case, pre *target.Batch) (held, *target.Batch, error) {
	g, ok := t.(*gpu.Target)
	if !ok || c.Op != (rmsnorm.Op{}).Name() {
		return nil, nil, nil
	}
	b, err := lazy(pre, c, t)
	if err != nil || !b.Lazy() {
		return nil, b, err
	}
	h, err := deviceHold(g.Hold(b))
	if err != nil || h == nil {
		return nil, nil, err // nil, nil: the caller makes the batch on the host
	}
	return stepwise(g, h), b, nil
}

// stepwise is h without the bulk check of prefixes when t may answer a
// batch two ways (gpu.Target.Deterministic: a nondeterministic drift
// model): its steps run one by one, and a step that differs runs again
// and is compared row by row with its first answer (sameTwice), which
// the bulk check's count of differing rows cannot stand for.
func stepwise(t *gpu.Target, h held) held {
	if p, ok := h.(gpuPrefixHeld); ok && !t.Deterministic() {
		return p.gpuHeld
	}
	return h
}

// deviceHold wraps a device-held batch; a batch the target does not hold
// (target.ErrUnsupported) is nil, no error.
func deviceHold[H deviceHeld](h H, err error) (held, error) {
	if errors.Is(err, target.ErrUnsupported) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if c, ok := any(h).(bulkChecker); ok {
		return gpuPrefixHeld{gpuHeld{h}, c}, nil
	}
	return gpuHeld{h}, nil
}

// bulkChecker is a device-held batch with the bulk check of prefixes
// (gpu.Held, gpu.GEMMHeld, gpu.LogProbHeld, gpu.UserHeld).
type bulkChecker interface {
	CheckPrefixes(ctx context.Context, c gpu.PrefixCheck) ([]gpu.PrefixStep, error)
}

// gpuPrefixHeld is a device-held batch that is a prefixChecker.
type gpuPrefixHeld struct {
	gpuHeld
	c bulkChecker
}

func (g gpuPrefixHeld) checkPrefixes(ctx context.Context, q prefixQuery) ([]*prefixStep, error) {
	ds, err := g.c.CheckPrefixes(ctx, gpu.PrefixCheck{Items: q.items, Alone: q.alone, Ref: q.ref, Taps: q.taps, Panel: q.panel})
	if err != nil {
		return nil, err
	}
	steps := make([]*prefixStep, len(ds))
	for i, d := range ds {
		steps[i] = &prefixStep{v: d.Items, alone: d.Alone, ref: d.Ref, panel: d.Panel, panelTaps: d.PanelTaps, sum: d.Sum}
	}
	return steps, nil
}

// deviceHeld is gpu.Held, gpu.AttnHeld and gpu.UserHeld.
type deviceHeld interface {
	Run(ctx context.Context, ids []int) (*target.Output, error)
	Alone(ctx context.Context, n int) (*target.Output, error)
	Release()
}

type gpuHeld struct{ h deviceHeld }

func (g gpuHeld) run(ctx context.Context, ids []int) (*target.Output, error) {
	return g.h.Run(ctx, ids)
}
func (g gpuHeld) alone(ctx context.Context, n int) (*target.Output, error) { return g.h.Alone(ctx, n) }
func (g gpuHeld) resident() bool                                           { return true }

// warm prepares the target's launches where the held batch can
// (gpu.GEMMHeld.Warm).
func (g gpuHeld) warm(ctx context.Context, sizes []int) error {
	if w, ok := g.h.(interface {
		Warm(context.Context, []int) error
	}); ok {
		return w.Warm(ctx, sizes)
	}
	return nil
}
func (g gpuHeld) release() { g.h.Release() }
