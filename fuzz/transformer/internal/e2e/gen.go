package e2e

import (
	"fmt"
	"math/rand"

	"github.com/bitparity/bitparity/spec"
)

// Gen bounds generated cases. The zero value gives small models (a few
// milliseconds to tens of milliseconds a case on one core).
type Gen struct {
	// MinSeqLen raises Shape.SeqLen to at least this (Plan draws request
	// lengths in [ceil(SeqLen/2), SeqLen]): 56 lets KV lengths pass 48.
	MinSeqLen int
	// MinTokens raises the request count so the train path packs at least
	// this many tokens: 256 lets rows >= 256 policies show.
	MinTokens int
	// MinHidden raises Shape.Hidden to at least this: reductions over more
	// than 256 elements let 256- and 1024-thread orders differ.
	MinHidden int
	// MoE makes every layer's MLP a mixture of experts (shape.dims),
	// drawn from the seed's own stream (streamMoEShape; the other draws
	// are those of the dense case): experts {4, 8}, top_k {1, 2}, and a
	// near-tie router (Config.NearTie) in one case of 2.
	MoE bool
}

// Case derives a random invariant case from seed: fixed kernels in both
// paths, logprob_parity, bf16 weights, activations and training dtype,
// the mask of the positions the engine reports (nil when it reports all).
// Shapes drawn from newRNG(seed, 0, 0):
//
//	layers 1..3, head dim {4, 8, 16}, kv heads {1, 2}, heads kv·{1, 2, 4},
//	hidden {16, 24, 32, 48, 64}, ffn 16..96 (step 8), vocab 16..160,
//	requests 1..6, longest request 3..40 tokens, tile {8, 16, 32},
//	eps {1e-5, 1e-6}, pad 64 (one case in 4: 128), filler zeros, normal,
//	nan or huge.
func (g Gen) Case(seed uint64) spec.Case {
	r := newRNG(seed, 0, 0)
	kv := 1 + r.intn(2)
	c := spec.Case{
		Version:  spec.CaseVersion,
		Op:       CaseOp,
		Relation: spec.RelLogProbParity,
		Targets:  []string{TrainPrefix + "fixed", InferPrefix + "fixed"},
		Shape: spec.Shape{
			Rows:    1 + r.intn(3),
			HeadDim: []int{4, 8, 16}[r.intn(3)],
			KVHeads: kv,
			Heads:   kv * []int{1, 2, 4}[r.intn(3)],
			Hidden:  []int{16, 24, 32, 48, 64}[r.intn(5)],
			N:       8 * r.between(2, 12),
			Vocab:   r.between(16, 160),
			Seqs:    r.between(1, 6),
			SeqLen:  r.between(3, 40),
			KV:      []int{8, 16, 32}[r.intn(3)],
		},
		In:         spec.BF16,
		Out:        spec.BF16,
		Eps:        []float32{1e-5, 1e-6}[r.intn(2)],
		Dist:       spec.DistNormal,
		Seed:       seed,
		GenVersion: GenVersion,
	}
	if r.intn(4) == 0 {
		c.Rel.Pad = 128
	}
	info, _ := CaseOp.Info()
	c.Rel.Filler = string(info.Fillers[r.intn(len(info.Fillers))])
	c.Shape.Hidden = max(c.Shape.Hidden, g.MinHidden)
	if c.Shape.SeqLen < g.MinSeqLen {
		c.Shape.SeqLen = g.MinSeqLen + r.intn(9)
	}
	if minLen := max(2, (c.Shape.SeqLen+1)/2); c.Shape.Seqs*minLen < g.MinTokens {
		c.Shape.Seqs = (g.MinTokens + minLen - 1) / minLen
	}
	if g.MoE {
		m := newRNG(seed, streamMoEShape, 0)
		c.Shape.Dims = map[string]int{DimExperts: []int{4, 8}[m.intn(2)], DimTopK: 1 + m.intn(2), DimNearTie: m.intn(2)}
	}
	reqs := Plan(seed, c.Shape.Seqs, c.Shape.SeqLen, c.Shape.Vocab)
	_, positions := positionBase(reqs)
	if mask := ReportedMask(reqs); len(mask) < positions {
		c.Rel.Mask = mask
	}
	return c
}

// CaseFrom is Case with a seed drawn from r (for campaigns that hold a
// *rand.Rand).
func (g Gen) CaseFrom(r *rand.Rand) spec.Case { return g.Case(r.Uint64()) }

// Plant returns c with drift model model planted at site in both paths
// (the same library kernel in the trainer and the engine, its schedule
// chosen by a policy of each batch).
func Plant(c spec.Case, model string, site Site) (spec.Case, error) {
	m, err := LookupDriftModel(model)
	if err != nil {
		return c, err
	}
	if site.Op.Kind() != m.Kind {
		return c, fmt.Errorf("plant %s at %s: a %s kernel cannot run %s", model, site, m.Kind, site.Op)
	}
	k := "fixed+" + model + "@" + site.String()
	c.Targets = []string{TrainPrefix + k, InferPrefix + k}
	return c, nil
}

// PlantSites lists the sites a drift model of kind k can be planted at in
// a model of layers layers.
func PlantSites(k Kind, layers int) []Site {
	var s []Site
	for _, site := range Sites(layers) {
		if site.Op.Kind() == k {
			s = append(s, site)
		}
	}
	return s
}

// RouterSite is the router GEMM of one of layers layers (an MoE model's
// OpRouter) that a campaign plants a GEMM drift model at for seed, drawn
// from the seed's own stream.
func RouterSite(seed uint64, layers int) Site {
	return Site{newRNG(seed, 99, 1).intn(layers), OpRouter}
}

// RandomSite is the site of kind k in a model of layers layers that a
// campaign plants its drift model at for seed: one of PlantSites, drawn
// from the seed's own stream.
func RandomSite(seed uint64, k Kind, layers int) Site {
	sites := PlantSites(k, layers)
	return sites[newRNG(seed, 99, 0).intn(len(sites))]
}
