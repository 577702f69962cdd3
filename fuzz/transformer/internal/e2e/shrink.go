package e2e

import (
	"slices"

	"github.com/bitparity/bitparity/spec"
)

// ShrinkSteps lists the smaller neighbours of transformer case c in the
// groups fuzz.Minimize tries (in each group it takes the first that still
// fails, then goes on to the next group, in rounds):
//
//	for each dimension (layers, requests, longest request, hidden, ffn,
//	vocab, heads, KV heads, head dim), a group: the candidates min, v/4,
//	v/2, v-1 (ascending, smaller than v); then filler, and pad, to their
//	defaults, a group each
//
// Layers never drop below a planted site's layer + 1. A mask that was the
// engine's reported positions stays so (recomputed for the new requests);
// an empty mask stays empty.
func ShrinkSteps(c spec.Case) [][]spec.Case {
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
	var out [][]spec.Case
	for _, d := range dims {
		v := *d.get(&c)
		var cands []int
		for _, w := range []int{d.min, v / 4, v / 2, v - 1} {
			if w >= d.min && w < v && !slices.Contains(cands, w) {
				cands = append(cands, w)
			}
		}
		slices.Sort(cands)
		var g []spec.Case
		for _, w := range cands {
			k := c
			*d.get(&k) = w
			g = append(g, remask(c, k))
		}
		out = append(out, g)
	}
	var filler, pad []spec.Case
	if c.Rel.Filler != "" {
		k := c
		k.Rel.Filler = ""
		filler = append(filler, remask(c, k))
	}
	if c.Rel.Pad != 0 {
		k := c
		k.Rel.Pad = 0
		pad = append(pad, remask(c, k))
	}
	return append(out, filler, pad)
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
