package attention

import (
	"math/rand/v2"
	"slices"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// FamilyCols is the sequence length: the longest KV range a query reads
// (power.PrefillCheck tells each row apart at its own, position + 1).
func (Prefill) FamilyCols(s spec.Shape) (int, bool) { return s.SeqLen, true }

// FamilyCols is the longest KV cache: the length the family is told
// apart at (a request of a shorter cache shows no alternative that runs
// the declared schedule's operations there).
func (Decode) FamilyCols(s spec.Shape) (int, bool) {
	if len(s.KVLens) == 0 {
		return s.KV, true
	}
	return slices.Max(s.KVLens), true
}

// Space is tile 1..1024 with one split (1024 schedules).
func (Prefill) Space(oracle.DType) []oracle.Schedule {
	var out []oracle.Schedule
	for t := 1; t <= 1024; t++ {
		out = append(out, oracle.AttentionSchedule{Tile: t, Splits: 1})
	}
	return out
}

// Space is tile 1..1024 x splits 1..128 (131072 schedules).
func (Decode) Space(oracle.DType) []oracle.Schedule {
	var out []oracle.Schedule
	for t := 1; t <= 1024; t++ {
		for s := 1; s <= 128; s++ {
			out = append(out, oracle.AttentionSchedule{Tile: t, Splits: s})
		}
	}
	return out
}

// ProbeLens is the sequence length.
func (Prefill) ProbeLens(in ops.In, _ int) []int { return []int{prefill(in).SeqLen} }

// ProbeLens is the KV length of each of the first take requests.
func (Decode) ProbeLens(in ops.In, take int) []int {
	d := decode(in)
	var lens []int
	for _, k := range d.K[:take] {
		lens = append(lens, len(k)/(d.KVHeads*d.HeadDim))
	}
	return lens
}

// Spread sets q = |q| and ramps each sequence's K (ops.Ramp).
func (Prefill) Spread(in ops.In, dt oracle.DType, _ *rand.Rand) {
	p := prefill(in)
	ops.Abs(p.Q)
	w := p.KVHeads * p.HeadDim
	for s := 0; s < p.Seqs; s++ {
		ops.Ramp(p.K[s*p.SeqLen*w:(s+1)*p.SeqLen*w], w, dt)
	}
}

// Spread sets q = |q| and ramps each request's K (ops.Ramp).
func (Decode) Spread(in ops.In, dt oracle.DType, _ *rand.Rand) {
	d := decode(in)
	ops.Abs(d.Q)
	for _, k := range d.K {
		ops.Ramp(k, d.KVHeads*d.HeadDim, dt)
	}
}
