package explain

import (
	"fmt"
	"math/rand/v2"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// A probe is one batch at a value of the swept dimension and the rows of
// it that are compared. Its inputs are the case's generated values with
// their exponents spread, so that reductions in different orders round
// differently (ops.CaseOp.Spread):
//
//	rmsnorm, gemm: every input value x becomes round_in(x · 2^u), u uniform in -1..1
//	               (wider spreads let a few large terms absorb the rest)
//	logprob:       logits x · 2^u, u in -1..1
//	attention:     q = |q|, k[j] = round_in(|k[j]|/4 + 2j/L): scores rise along the KV
//	               sequence, so every tile raises the running max and rescales
type probe struct {
	b    *target.Batch
	rows []int
	lens []int // ops.CaseOp.ProbeLens: KV lengths of the compared rows (attention); K (gemm)
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
		b, err := inputs.Of(pc)
		if err != nil {
			return nil, fmt.Errorf("explain: probe inputs at %s = %d: %w", dim, v, err)
		}
		k, in, err := b.Kind()
		if err != nil {
			return nil, fmt.Errorf("explain: probe inputs at %s = %d: %w", dim, v, err)
		}
		k.Spread(in, b.In, rand.New(rand.NewPCG(seed, i)))
		take := min(b.Items(), probeItems-items)
		if dim == "kv" {
			take = min(b.Items(), max(1, probeItems/8)) // one sequence: its every position is a row
		}
		per := b.RowsPerItem()
		p := probe{b: b}
		for r := 0; r < take*per; r++ {
			p.rows = append(p.rows, r)
		}
		p.lens = k.ProbeLens(in, take)
		ps = append(ps, p)
		items += take
		if dim == "kv" {
			break
		}
	}
	return ps, nil
}
