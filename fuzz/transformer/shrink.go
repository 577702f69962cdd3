package transformer

import (
	"context"
	"slices"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// Minimize shrinks a failing transformer case: it returns the smallest
// case it finds for which Check still gives a finding that keep accepts
// (the same kind at the same site, say), and the number of accepted steps.
// It repeats, until a round changes nothing or budget is spent:
//
//	for each dimension (layers, requests, longest request, hidden, ffn,
//	vocab, heads, head dim, tile; then filler and pad to their defaults):
//		try the candidates min, v/4, v/2, v-1 (ascending, smaller than v)
//		and keep the first whose finding keep accepts
//
// Layers never drop below a planted site's layer + 1. A mask that was the
// engine's reported positions stays so (recomputed for the new requests);
// an empty mask stays empty. c itself must fail (else it is returned with 0
// steps).
func Minimize(ctx context.Context, c spec.Case, keep func(*spec.Finding) bool, budget time.Duration) (spec.Case, int, error) {
	deadline := time.Now().Add(budget)
	fails := func(k spec.Case) (bool, error) {
		f, err := Check(ctx, k)
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, nil // an invalid candidate is not a failure
		}
		return f != nil && keep(f), nil
	}
	if ok, err := fails(c); err != nil || !ok {
		return c, 0, err
	}
	minLayers := 1
	if st, err := FromCase(c); err == nil {
		for _, k := range []Kernels{st.Train, st.Infer} {
			if p, ok := planted(k); ok && p.At.Layer != Final {
				minLayers = max(minLayers, p.At.Layer+1)
			}
		}
	}
	type dim struct {
		min int
		get func(*spec.Case) *int
	}
	dims := []dim{
		{minLayers, func(k *spec.Case) *int { return &k.Shape.Rows }},
		{1, func(k *spec.Case) *int { return &k.Shape.Seqs }},
		{2, func(k *spec.Case) *int { return &k.Shape.SeqLen }},
		{1, func(k *spec.Case) *int { return &k.Shape.Hidden }},
		{1, func(k *spec.Case) *int { return &k.Shape.N }},
		{2, func(k *spec.Case) *int { return &k.Shape.Vocab }},
		{1, func(k *spec.Case) *int { return &k.Shape.Heads }},
		{1, func(k *spec.Case) *int { return &k.Shape.KVHeads }},
		{1, func(k *spec.Case) *int { return &k.Shape.HeadDim }},
	}
	steps := 0
	try := func(k spec.Case) (bool, error) {
		if time.Now().After(deadline) {
			return false, nil
		}
		k = remask(c, k)
		ok, err := fails(k)
		if ok {
			c = k
			steps++
		}
		return ok, err
	}
	for changed := true; changed && time.Now().Before(deadline); {
		changed = false
		for _, d := range dims {
			v := *d.get(&c)
			var cands []int
			for _, w := range []int{d.min, v / 4, v / 2, v - 1} {
				if w >= d.min && w < v && !slices.Contains(cands, w) {
					cands = append(cands, w)
				}
			}
			slices.Sort(cands)
			for _, w := range cands {
				k := c
				*d.get(&k) = w
				ok, err := try(k)
				if err != nil {
					return c, steps, err
				}
				if ok {
					changed = true
					break
				}
			}
		}
		for _, edit := range []func(*spec.Case) bool{
			func(k *spec.Case) bool { ch := k.Rel.Filler != ""; k.Rel.Filler = ""; return ch },
			func(k *spec.Case) bool { ch := k.Rel.Pad != 0; k.Rel.Pad = 0; return ch },
		} {
			k := c
			if !edit(&k) {
				continue
			}
			ok, err := try(k)
			if err != nil {
				return c, steps, err
			}
			changed = changed || ok
		}
	}
	return c, steps, nil
}

// remask keeps the meaning of the mask of from in k: the engine's reported
// positions (recomputed for k's requests) or empty.
func remask(from, k spec.Case) spec.Case {
	if len(from.Rel.Mask) == 0 {
		return k
	}
	old := Plan(from.Seed, from.Shape.Seqs, from.Shape.SeqLen, from.Shape.Vocab)
	if !slices.Equal(from.Rel.Mask, ReportedMask(old)) {
		return k
	}
	reqs := Plan(k.Seed, k.Shape.Seqs, k.Shape.SeqLen, k.Shape.Vocab)
	_, positions := positionBase(reqs)
	k.Rel.Mask = nil
	if mask := ReportedMask(reqs); len(mask) < positions {
		k.Rel.Mask = mask
	}
	return k
}
