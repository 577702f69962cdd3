//go:build cuda

package gpu

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// The gemm and log-prob holds take the bulk check of prefixes
// (checkPrefixes) as Held does: each is a prefixLauncher through its
// enqueuePrefix.

// CheckPrefixes is Held.CheckPrefixes for a held gemm batch: the batches
// of X's rows 0..v-1 (M = v) for v = from..to, each row compared by its
// digest with the same row alone (M = 1, Alone's output). A gemm has no
// taps.
func (h *GEMMHeld) CheckPrefixes(ctx context.Context, from, to int, alone *target.Output, taps bool) ([]PrefixDiff, error) {
	if h.released {
		return nil, fmt.Errorf("gpu: held batch already released")
	}
	diffs, err := checkPrefixes(ctx, h, from, to, alone, taps)
	if err != nil {
		return nil, fmt.Errorf("gpu: %s, prefixes %d..%d: %w", h.name, from, to, err)
	}
	return diffs, nil
}

func (h *GEMMHeld) prefixDevice() *Device { return h.d }

func (h *GEMMHeld) prefixShape() prefixShape {
	return prefixShape{items: h.m, rowsPerItem: 1, cols: h.n, dt: h.c}
}

// CheckPrefixes is Held.CheckPrefixes for a held log-prob batch: one fp32
// log-prob a row, and its two taps (row max, sum of exponentials).
func (h *LogProbHeld) CheckPrefixes(ctx context.Context, from, to int, alone *target.Output, taps bool) ([]PrefixDiff, error) {
	if h.released {
		return nil, fmt.Errorf("gpu: held batch already released")
	}
	diffs, err := checkPrefixes(ctx, h, from, to, alone, taps)
	if err != nil {
		return nil, fmt.Errorf("gpu: %s, prefixes %d..%d: %w", h.t.info.Name, from, to, err)
	}
	return diffs, nil
}

func (h *LogProbHeld) prefixDevice() *Device { return h.t.dev }

func (h *LogProbHeld) prefixShape() prefixShape {
	return prefixShape{items: h.rows, rowsPerItem: 1, cols: 1, tapCols: 2, dt: oracle.FP32}
}
