// Package taps carries, in a context, whether a check compares the fp32
// taps beside the outputs: fuzz.Check reads it, and the campaign
// (Campaign.NoTaps) and the detection-power measurement set it.
package taps

import "context"

type offKey struct{}

// Off returns a context under which a check compares outputs only, never
// the fp32 taps: a drift then counts as found only once it flips an
// output bit (what detection-power measurements want). Drift maps still
// classify by outputs and taps.
func Off(ctx context.Context) context.Context {
	return context.WithValue(ctx, offKey{}, true)
}

// On reports whether checks under ctx compare the taps (ctx is not Off).
func On(ctx context.Context) bool { return ctx.Value(offKey{}) == nil }
