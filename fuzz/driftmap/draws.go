package driftmap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/bitparity/bitparity/spec"
)

// SweepDraws is Sweep over several input draws: classify[k] classifies a
// value on draw k, and a value's class is the tuple of its digests over
// all draws. Two values share a class only when every draw gives them the
// same bits, so a class boundary seen in any one draw splits the class
// (the partition is the common refinement of the draws' partitions): a
// map is never coarser than what any draw shows. A low-entropy draw (a
// constant row, whose sums come out exact in every order) can hide a
// schedule change; a random draw beside it shows it. The map's Draws is
// len(classify).
func SweepDraws(ctx context.Context, dim string, values []int, classify []func(v int) (string, error)) (*spec.DriftMap, error) {
	if len(classify) == 0 {
		return nil, fmt.Errorf("drift map of %s: no draws", dim)
	}
	tuple := func(v int) (string, error) {
		ds := make([]string, len(classify))
		for k, c := range classify {
			d, err := c(v)
			if err != nil {
				return "", fmt.Errorf("draw %d: %w", k, err)
			}
			ds[k] = d
		}
		if len(ds) == 1 {
			return ds[0], nil
		}
		h := sha256.Sum256([]byte(strings.Join(ds, "\x00")))
		return hex.EncodeToString(h[:6]), nil
	}
	m, err := Sweep(ctx, dim, values, tuple)
	if err != nil {
		return nil, err
	}
	m.Draws = len(classify)
	return m, nil
}
