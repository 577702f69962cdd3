package transformer

import (
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/transformer/internal/e2e"
	"github.com/bitparity/bitparity/spec"
)

// controlCases is how many cases each control (a planted drift model or a
// misuse) runs before it counts as missed, even past a campaign's
// Duration: whether a control is found then depends on the seed, not on
// how fast the machine is.
const controlCases = 12

// Source is the end-to-end transformer as a composite source of
// fuzz.Campaign, checked by fuzz.Check and shrunk by fuzz.Minimize. Its
// Check runs a transformer case (any backends it names); its jobs draw
// cases with the train path on backend train and the inference path on
// backend infer ("" or CPU: the CPU oracle):
//
//   - "transformer/invariant/logprob_parity",
//     "transformer/invariant/path_parity" and
//     "transformer/invariant/moe_path_parity": fixed kernels in both paths
//     over fuzzed models (dense; for the last, mixtures of experts,
//     e2e.Gen.MoE) and request mixes; any finding is unexpected;
//   - "transformer/drift/<model>": the drift model planted at a random site
//     of its kind in both paths, under path parity; a control that must be
//     found at the planted site (else the finding is not Expected);
//   - "transformer/drift/gemm_splitk_by_m@router": the same, split-K by M
//     planted at one layer's router GEMM of a mixture of experts;
//   - "transformer/misuse/compare_fp32" and "transformer/misuse/zero_fill":
//     the seed's harness bugs (log-probs compared in fp32 against the bf16
//     training dtype; unreported positions zero-filled and compared);
//     controls that must be flagged as misuse.
//
// Each control runs at least 12 cases unless found (fuzz.Job.MinCases). A
// finding's Site is the first layer and op where a token diverged; Shrink
// makes the model and the batch smaller, keeping a planted site's layer.
func Source(train, infer string) *fuzz.Source {
	return &fuzz.Source{Name: "transformer", Op: Op, Check: e2e.Check, Shrink: e2e.ShrinkSteps,
		Planted: e2e.PlantedSite, Jobs: jobs(train, infer)}
}

// moeRouterModel is the drift model the MoE control plants at a layer's
// router GEMM: split-K chosen by M, as cuBLAS's heuristic; the router's
// logits move by ulps between the packed training batch and the decode
// steps, and a near-tie token changes its experts.
const moeRouterModel = "gemm_splitk_by_m"

// jobs lists the source's jobs (Source).
func jobs(train, infer string) []fuzz.Job {
	on := func(c spec.Case) (spec.Case, bool) { return e2e.WithBackends(c, train, infer), true }
	// invariant is the job name of relation rel on fixed kernels, its
	// case of seed drawn by gen(seed).
	invariant := func(name, rel string, gen func(seed uint64) e2e.Gen) fuzz.Job {
		return fuzz.Job{Name: "transformer/invariant/" + name, Relation: rel, Invariant: true,
			Draw: func(seed uint64) (spec.Case, bool) {
				c := gen(seed).Case(seed)
				c.Relation = rel
				return on(c)
			}}
	}
	// planted is the control name: drift model model planted at
	// site(seed, layers) in gen's cases, under path parity.
	planted := func(name string, gen e2e.Gen, model string, site func(seed uint64, layers int) e2e.Site) fuzz.Job {
		return fuzz.Job{Name: "transformer/drift/" + name, Relation: spec.RelPathParity,
			Expect: spec.KindMismatch, MinCases: controlCases,
			Draw: func(seed uint64) (spec.Case, bool) {
				c := gen.Case(seed)
				c.Relation = spec.RelPathParity
				c, err := e2e.Plant(c, model, site(seed, c.Shape.Rows))
				if err != nil {
					return c, false
				}
				return on(c)
			}}
	}
	js := []fuzz.Job{
		invariant(spec.RelLogProbParity, spec.RelLogProbParity, func(uint64) e2e.Gen { return e2e.Gen{} }),
		invariant(spec.RelPathParity, spec.RelPathParity, func(seed uint64) e2e.Gen {
			if seed%4 == 0 { // KV lengths past 48
				return e2e.Gen{MinSeqLen: 56}
			}
			return e2e.Gen{}
		}),
		invariant("moe_"+spec.RelPathParity, spec.RelPathParity, func(uint64) e2e.Gen { return e2e.Gen{MoE: true} }),
		planted(moeRouterModel+"@router", e2e.Gen{MoE: true, MinTokens: 96}, moeRouterModel, e2e.RouterSite),
	}
	for _, m := range e2e.DriftModels {
		js = append(js, planted(m.Name, m.Needs, m.Name, func(seed uint64, layers int) e2e.Site {
			return e2e.RandomSite(seed, m.Kind, layers)
		}))
	}
	misuse := func(name string, edit func(c *spec.Case) bool) fuzz.Job {
		return fuzz.Job{Name: "transformer/misuse/" + name, Relation: spec.RelLogProbParity,
			Expect: spec.KindMisuse, MinCases: controlCases,
			Draw: func(seed uint64) (spec.Case, bool) {
				c := e2e.Gen{}.Case(seed)
				c.Relation = spec.RelLogProbParity
				if !edit(&c) {
					return c, false
				}
				return on(c)
			}}
	}
	return append(js,
		misuse("compare_fp32", func(c *spec.Case) bool { c.Compare = spec.FP32; return true }),
		misuse("zero_fill", func(c *spec.Case) bool {
			if len(c.Rel.Mask) == 0 {
				return false // the engine reported every position
			}
			c.Rel.Mask = nil
			return true
		}))
}
