package attention

import (
	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Nudge nudges every (request, head) on that request's V cache
// (boundary.AttendRow); odd request + head aims one fp32 ulp to the odd
// side of the midpoint.
func (Decode) Nudge(_ spec.Case, in ops.In, dt, out oracle.DType, n ops.Nudger) error {
	d := decode(in)
	hd := d.Heads * d.HeadDim
	n.Each(len(d.K), func(r int, _ uint64) {
		for h := 0; h < d.Heads; h++ {
			boundary.AttendRow(d.Q[r*hd:(r+1)*hd], d.K[r], d.V[r], d.Heads, d.KVHeads, d.HeadDim, h, dt, out, OracleSchedule, (r+h)%2 == 1)
		}
	})
	return nil
}

// Nudge nudges the last query position of every sequence, every head
// (boundary.AttendRow); odd sequence + head aims one fp32 ulp to the odd
// side of the midpoint.
func (Prefill) Nudge(_ spec.Case, in ops.In, dt, out oracle.DType, n ops.Nudger) error {
	p := prefill(in)
	hd, kvd := p.Heads*p.HeadDim, p.KVHeads*p.HeadDim
	n.Each(p.Seqs, func(s int, _ uint64) {
		last := s*p.SeqLen + p.SeqLen - 1
		k := p.K[s*p.SeqLen*kvd : (s+1)*p.SeqLen*kvd]
		v := p.V[s*p.SeqLen*kvd : (s+1)*p.SeqLen*kvd]
		for h := 0; h < p.Heads; h++ {
			boundary.AttendRow(p.Q[last*hd:(last+1)*hd], k, v, p.Heads, p.KVHeads, p.HeadDim, h, dt, out, OracleSchedule, (s+h)%2 == 1)
		}
	})
	return nil
}
