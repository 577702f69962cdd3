//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The gemm, log-prob and user kernel holds take the bulk check of prefixes
// (checkPrefixes) as Held does: each is a prefixLauncher through its
// enqueuePrefix.

// CheckPrefixes is Held.CheckPrefixes for a held gemm batch: the batches
// of X's rows 0..v-1 (M = v) for v in c.Items, each row compared by its
// digest with the same row alone (M = 1, Alone's output) and in the
// reference batch. A gemm has no taps.
func (h *GEMMHeld) CheckPrefixes(ctx context.Context, c PrefixCheck) ([]PrefixStep, error) {
	return checkHeld(ctx, h, h.released, h.name, c)
}

func (h *GEMMHeld) prefixDevice() *Device { return h.d }

func (h *GEMMHeld) prefixShape() prefixShape {
	return prefixShape{items: h.m, rowsPerItem: 1, cols: h.n, dt: h.c}
}

// CheckPrefixes is Held.CheckPrefixes for a held log-prob batch: one fp32
// log-prob a row, and its two taps (row max, sum of exponentials).
func (h *LogProbHeld) CheckPrefixes(ctx context.Context, c PrefixCheck) ([]PrefixStep, error) {
	return checkHeld(ctx, h, h.released, h.t.info.Name, c)
}

func (h *LogProbHeld) prefixDevice() *Device { return h.t.dev }

func (h *LogProbHeld) prefixShape() prefixShape {
	return prefixShape{items: h.rows, rowsPerItem: 1, cols: 1, tapCols: 2, dt: oracle.FP32}
}

// CheckPrefixes is Held.CheckPrefixes for a user kernel's held batch: the
// kernel on held items 0..v-1 in place (rows = v; an attention batch's
// step as attnStep says, its int32 tensors in place: inPlace) for v in
// c.Items, each step's output (and lse) filled with 0xff bytes before
// its launch, as Run's, and every row compared by its digest with the
// same row alone (Alone's output) and in the reference batch, and by its
// lse when c.Taps and the kernel writes it. No step is waited for by itself: a fault or a hang
// shows when the window's end is waited for, and belongs to the window
// (the scan announces it as one batch). An error after which the
// device's stream is unusable is the kernel's and wraps
// target.ErrTargetCrashed.
func (h *UserHeld) CheckPrefixes(ctx context.Context, c PrefixCheck) ([]PrefixStep, error) {
	if h.bufs == nil {
		return nil, errReleased
	}
	d := h.k.d
	err := d.do(func() error { return h.prefixTables(c.Items) })
	var steps []PrefixStep
	if err == nil {
		if steps, err = checkPrefixes(ctx, h, c); err == nil {
			return steps, nil
		}
	}
	if ctx.Err() == nil && !errors.Is(err, target.ErrTargetCrashed) {
		if serr := d.do(func() error { return d.stream.Synchronize() }); serr != nil {
			err = fmt.Errorf("%w: %w", target.ErrTargetCrashed, err)
		}
	}
	return nil, fmt.Errorf("target %s, %s: %w", h.k.info.Name, prefixesWord(c.Items), err)
}

// prefixTables uploads, on the lane's stream, the block tables (table)
// the prefixes items of a held decode batch read, before the bulk check
// spreads them over side streams that wait for the lane's stream (under
// do).
func (h *UserHeld) prefixTables(items []int) error {
	if h.k.m.Op != (attention.Decode{}).Name() {
		return nil
	}
	for _, v := range items {
		if v < 1 || v > h.items {
			continue // the check says why
		}
		st, err := h.in.attnStep(spec.Iota(v))
		if err != nil {
			return err
		}
		if _, err := h.table(int(st.sizes["max_pages"])); err != nil {
			return err
		}
	}
	return nil
}

func (h *UserHeld) prefixDevice() *Device { return h.k.d }

func (h *UserHeld) prefixShape() prefixShape {
	sh := prefixShape{items: h.items, rowsPerItem: h.rowsPerItem, cols: h.cols, dt: h.out}
	if h.lse {
		sh.tapCols = 1
	}
	return sh
}

func (h *UserHeld) enqueuePrefix(v int, out, taps *buffer) error {
	return h.enqueuePrefixOn(h.k.d.stream, v, out, taps)
}

// enqueuePrefixOn makes UserHeld a streamPrefixer: the bulk check spreads
// its steps over the lane's side streams, each step's clears and launch on
// one of them.
func (h *UserHeld) enqueuePrefixOn(st cu.Stream, v int, out, taps *buffer) error {
	if err := h.clear(st, out, v); err != nil {
		return err
	}
	if h.ptrs == nil {
		h.ptrs = maps.Clone(h.bufs)
	}
	h.ptrs["y"] = out
	if h.lse {
		if err := h.clearTaps(st, taps, v); err != nil {
			return err
		}
		h.ptrs["lse"] = taps
	}
	shape, err := h.step(h.ptrs, spec.Iota(v), 0, nil)
	if err != nil {
		return err
	}
	return h.launch(st, h.ptrs, shape)
}
