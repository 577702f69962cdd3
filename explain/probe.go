package explain

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// A probe is one batch at a value of the swept dimension and the rows of
// it that are compared. Its inputs are the case's generated values with
// their exponents spread, so that reductions in different orders round
// differently:
//
//	rmsnorm, gemm: every input value x becomes round_in(x · 2^u), u uniform in -1..1
//	               (wider spreads let a few large terms absorb the rest)
//	logprob:       logits x · 2^u, u in -1..1
//	attention:     q = |q|, k[j] = round_in(|k[j]|/4 + 2j/L): scores rise along the KV
//	               sequence, so every tile raises the running max and rescales
type probe struct {
	b    *target.Batch
	rows []int
	lens []int // KV lengths of the compared rows (attention); K (gemm)
}

// probeItems is the number of items (tokens, requests, sequences) a probe
// set compares in all.
const probeItems = 16

// probeCase returns c with dimension dim set to v and seed seed, drawn
// from the normal distribution without relation parameters.
func probeCase(c spec.Case, dim string, v int, seed uint64) (spec.Case, error) {
	c.Data = nil
	c.Rel = spec.RelParams{}
	c.Dist = spec.DistNormal
	c.Seed = seed
	c.GenVersion = spec.GeneratorVersion
	switch dim {
	case "rows", "batch":
		c.Shape.Rows = v
		if len(c.Shape.KVLens) > 0 {
			c.Shape.KVLens = nil
			if c.Shape.KV == 0 {
				c.Shape.KV = 64
			}
		}
	case "seqs":
		c.Shape.Seqs = v
	case "kv":
		c.Shape.SeqLen = v
		c.Shape.Seqs = 1
	default:
		return c, fmt.Errorf("explain: unknown swept dimension %q", dim)
	}
	return c, nil
}

// probes returns batches at value v of dim whose compared rows cover
// probeItems items (several batches when v is smaller).
func probes(c spec.Case, dim string, v int, seed uint64) ([]probe, error) {
	var ps []probe
	items := 0
	for i := uint64(0); items < probeItems; i++ {
		pc, err := probeCase(c, dim, v, seed+i)
		if err != nil {
			return nil, err
		}
		b, err := fuzz.Inputs(pc)
		if err != nil {
			return nil, fmt.Errorf("explain: probe inputs at %s = %d: %w", dim, v, err)
		}
		spread(b, rand.New(rand.NewPCG(seed, i)))
		take := min(b.Items(), probeItems-items)
		if dim == "kv" {
			take = min(b.Items(), max(1, probeItems/8)) // one sequence: its every position is a row
		}
		per := b.RowsPerItem()
		p := probe{b: b}
		for r := 0; r < take*per; r++ {
			p.rows = append(p.rows, r)
		}
		switch b.Op {
		case spec.OpAttnDecode:
			for _, k := range b.Decode.K[:take] {
				p.lens = append(p.lens, len(k)/(b.Decode.KVHeads*b.Decode.HeadDim))
			}
		case spec.OpAttnPrefill:
			p.lens = []int{b.Prefill.SeqLen}
		case spec.OpGEMM:
			p.lens = []int{b.GEMM.K}
		}
		ps = append(ps, p)
		items += take
		if dim == "kv" {
			break
		}
	}
	return ps, nil
}

// spread rewrites b's inputs in place as probe's doc comment states.
func spread(b *target.Batch, r *rand.Rand) {
	scale := func(xs []float32, lo, hi int) {
		for i, x := range xs {
			xs[i] = oracle.Round(b.In, float32(math.Ldexp(float64(x), lo+r.IntN(hi-lo+1))))
		}
	}
	ramp := func(k []float32, width int) {
		L := len(k) / width
		for j := 0; j < L; j++ {
			for d := 0; d < width; d++ {
				x := &k[j*width+d]
				*x = oracle.Round(b.In, float32(math.Abs(float64(*x))/4+2*float64(j)/float64(max(L, 1))))
			}
		}
	}
	abs := func(xs []float32) {
		for i, x := range xs {
			xs[i] = float32(math.Abs(float64(x)))
		}
	}
	switch b.Op {
	case spec.OpRMSNorm:
		scale(b.RMSNorm.X, -1, 1)
	case spec.OpGEMM:
		scale(b.GEMM.X, -1, 1)
		scale(b.GEMM.W, -1, 1)
	case spec.OpLogProb:
		scale(b.LogProb.Logits, -1, 1)
	case spec.OpAttnDecode:
		abs(b.Decode.Q)
		for _, k := range b.Decode.K {
			ramp(k, b.Decode.KVHeads*b.Decode.HeadDim)
		}
	case spec.OpAttnPrefill:
		p := b.Prefill
		abs(p.Q)
		w := p.KVHeads * p.HeadDim
		for s := 0; s < p.Seqs; s++ {
			ramp(p.K[s*p.SeqLen*w:(s+1)*p.SeqLen*w], w)
		}
	}
}
