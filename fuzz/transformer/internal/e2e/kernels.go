package e2e

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/oracle"
)

// Op names one op of the forward pass. Ops run in the order of Ops within
// each layer, then the final ops.
type Op string

const (
	OpEmbed        Op = "embed"         // table lookup (layer 0 only)
	OpAttnNorm     Op = "attn_norm"     // RMSNorm
	OpQKV          Op = "qkv"           // GEMM to q | k | v
	OpAttention    Op = "attention"     // causal prefill, or decode against the KV cache
	OpOutProj      Op = "out_proj"      // GEMM
	OpAttnResidual Op = "attn_residual" // h = round(h + o)
	OpMLPNorm      Op = "mlp_norm"      // RMSNorm
	OpRouter       Op = "router"        // GEMM to the experts' logits, fp32 (MoE layers)
	OpRoute        Op = "route"         // moe_route: top-k expert ids and weights (MoE layers)
	OpMLPUp        Op = "mlp_up"        // GEMM to gate | up
	OpMLPAct       Op = "mlp_act"       // round(silu(gate) · up)
	OpMLPDown      Op = "mlp_down"      // GEMM
	OpMLPResidual  Op = "mlp_residual"  // h = round(h + d)
	OpFinalNorm    Op = "final_norm"    // RMSNorm (layer Final)
	OpLMHead       Op = "lm_head"       // GEMM to the vocabulary (layer Final)
	OpLogProb      Op = "logprob"       // token log-prob (layer Final)
)

// LayerOps lists the ops of one decoder layer in execution order.
var LayerOps = []Op{OpAttnNorm, OpQKV, OpAttention, OpOutProj, OpAttnResidual,
	OpMLPNorm, OpMLPUp, OpMLPAct, OpMLPDown, OpMLPResidual}

// MoEOps lists the ops an MoE layer runs after OpMLPNorm, in execution
// order; its MLP ops then run its experts (moe.go).
var MoEOps = []Op{OpRouter, OpRoute}

// FinalOps lists the ops after the last layer in execution order.
var FinalOps = []Op{OpFinalNorm, OpLMHead, OpLogProb}

// Final is the layer index of the ops after the last decoder layer.
const Final = -1

// Kind is the kind of kernel an op runs.
type Kind string

const (
	KindRMSNorm     Kind = "rmsnorm"
	KindGEMM        Kind = "gemm"
	KindAttention   Kind = "attention"
	KindLogProb     Kind = "logprob"
	KindElementwise Kind = "elementwise" // no reduction, no schedule
)

// Kind returns the kernel kind of op.
func (o Op) Kind() Kind {
	switch o {
	case OpAttnNorm, OpMLPNorm, OpFinalNorm:
		return KindRMSNorm
	case OpQKV, OpOutProj, OpMLPUp, OpMLPDown, OpLMHead, OpRouter:
		return KindGEMM
	case OpAttention:
		return KindAttention
	case OpLogProb:
		return KindLogProb
	}
	return KindElementwise
}

// Site is one op at one layer (Layer is Final for the final ops).
type Site struct {
	Layer int
	Op    Op
}

func (s Site) String() string {
	if s.Layer == Final {
		return "final." + string(s.Op)
	}
	return fmt.Sprintf("L%d.%s", s.Layer, s.Op)
}

// ParseSite parses "L2.mlp_up" or "final.lm_head".
func ParseSite(s string) (Site, error) {
	layer, op, ok := strings.Cut(s, ".")
	if !ok {
		return Site{}, fmt.Errorf("site %q: want L<layer>.<op> or final.<op>", s)
	}
	st := Site{Op: Op(op)}
	if layer == "final" {
		st.Layer = Final
	} else {
		n, err := strconv.Atoi(strings.TrimPrefix(layer, "L"))
		if err != nil || !strings.HasPrefix(layer, "L") || n < 0 {
			return Site{}, fmt.Errorf("site %q: layer %q: want L<n> or final", s, layer)
		}
		st.Layer = n
	}
	known := false
	for _, o := range append(append(append([]Op{OpEmbed}, LayerOps...), MoEOps...), FinalOps...) {
		known = known || o == st.Op
	}
	if !known {
		return Site{}, fmt.Errorf("site %q: unknown op %q", s, op)
	}
	if final := st.Op == OpFinalNorm || st.Op == OpLMHead || st.Op == OpLogProb; final != (st.Layer == Final) {
		return Site{}, fmt.Errorf("site %q: %s belongs to %s", s, st.Op, map[bool]string{true: "layer final", false: "a decoder layer"}[final])
	}
	return st, nil
}

// Path is one of the two ways a request's log-probs are computed.
type Path string

const (
	Train Path = "train" // packed prefill over whole sequences
	Infer Path = "infer" // prompt prefill, then decode against a KV cache
)

// Phase is the kind of batch a call belongs to.
type Phase string

const (
	Packed  Phase = "packed"  // train: all tokens of all sequences
	Prefill Phase = "prefill" // infer: the prompts of the requests that joined
	Decode  Phase = "decode"  // infer: one token per live request, padded
)

// Call describes one kernel launch: what a policy may look at.
type Call struct {
	Site
	Path  Path
	Phase Phase
	// Rows is the number of rows the kernel's batch has, filler included:
	// tokens for RMSNorm, GEMM (M) and log-prob; query tokens for a
	// prefill attention; requests (the padded batch) for a decode
	// attention.
	Rows int
	// Heads is the model's query heads (decode heuristics weigh
	// requests x heads against the SMs).
	Heads int
}

// Schedule is the schedule of one call; an op reads the field of its kind.
type Schedule struct {
	RMSNorm   oracle.RMSNormSchedule
	GEMM      oracle.GEMMSchedule
	Attention oracle.AttentionSchedule // Splits is read by decode only
	LogProb   oracle.LogProbSchedule
}

// Kernels says which schedule every op call uses.
type Kernels interface {
	Schedule(c Call) Schedule
	// String is the kernel spec that ParseKernels reads back.
	String() string
}

// Fixed is the invariant kernel set: one schedule for every call, whatever
// the batch, in both paths. Decode uses Splits = 1 with the prefill's tile,
// which is bitwise the prefill row by construction of the oracle.
type Fixed struct {
	S Schedule
}

func (f Fixed) Schedule(Call) Schedule { return f.S }
func (f Fixed) String() string         { return "fixed" }

// FixedFor returns the fixed schedules of a case: attention tile tile,
// Splits 1, and reduction shapes derived from seed:
//
//	rmsnorm threads ∈ {1, 4, 32} vec ∈ {1, 2}, butterfly, sequential cross
//	gemm    split-k ∈ {1, 2, 3}, sequential combine
//	logprob threads ∈ {1, 32} vec 1
func FixedFor(seed uint64, tile int) Fixed {
	r := newRNG(seed, streamSchedule, 0)
	return Fixed{S: Schedule{
		RMSNorm:   oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: []int{1, 4, 32}[r.intn(3)], Vec: 1 + r.intn(2)}},
		GEMM:      oracle.GEMMSchedule{SplitK: 1 + r.intn(3)},
		Attention: oracle.AttentionSchedule{Tile: tile, Splits: 1},
		LogProb:   oracle.LogProbSchedule{Reduce: oracle.Reduction{Threads: []int{1, 32}[r.intn(2)], Vec: 1}},
	}}
}

// Planted is Base with a drift model in place of one site's kernel: calls
// at At get Model's policy, every other call Base's schedule.
type Planted struct {
	Base  Kernels
	Model DriftModel
	At    Site
}

func (p Planted) Schedule(c Call) Schedule {
	s := p.Base.Schedule(c)
	if c.Site == p.At {
		return p.Model.Policy(c, s)
	}
	return s
}

func (p Planted) String() string { return p.Base.String() + "+" + p.Model.Name + "@" + p.At.String() }

// DriftModel is a kernel whose schedule is chosen by a policy of the batch,
// the way real kernels choose theirs.
type DriftModel struct {
	Name string
	Kind Kind // the op kind it can replace
	// Dim is the batch dimension its policy reads: "rows" (Call.Rows of a
	// token batch), "batch" (the padded decode batch) or "path" (which
	// path calls it; its effect shows along "kv").
	Dim string
	// Models says which real kernel behaviour it reproduces and where that
	// fact comes from.
	Models string
	// Policy returns the schedule of call c given the base schedule.
	Policy func(c Call, base Schedule) Schedule
	// Needs bounds the generated cases so the policy's classes can differ
	// between the paths (enough packed tokens, KV lengths past a tile).
	Needs Gen
}

// otherReduction returns a reduction order that differs from r.
func otherReduction(r oracle.Reduction) oracle.Reduction {
	if r.Threads == 32 && r.Vec == 4 {
		return oracle.Reduction{Threads: 1, Vec: 1}
	}
	return oracle.Reduction{Threads: 32, Vec: 4, Warp: oracle.WarpButterfly}
}

// DriftModels lists the drift models that can be planted, by name: this
// package's own, then the fuzz engine's (fuzzDriftModels).
var DriftModels = append(ownDriftModels, fuzzDriftModels()...)

// ownDriftModels are the drift models written for the transformer.
var ownDriftModels = []DriftModel{
	{
		Name: "rmsnorm_rows_mod32", Kind: KindRMSNorm, Dim: "rows",
		Models: "TransformerEngine's RMSNorm picks its reduction path on M % 32 (rows % 32 == 0 vs the rest)",
		Policy: func(c Call, s Schedule) Schedule {
			if c.Rows%32 != 0 {
				s.RMSNorm.Reduce = otherReduction(s.RMSNorm.Reduce)
			}
			return s
		},
	},
	{
		Name: "rmsnorm_rows_ge256", Kind: KindRMSNorm, Dim: "rows", Needs: Gen{MinTokens: 256},
		Models: "vLLM's RMSNorm switched reduction strategy at 256 tokens",
		Policy: func(c Call, s Schedule) Schedule {
			if c.Rows >= 256 {
				s.RMSNorm.Reduce = otherReduction(s.RMSNorm.Reduce)
			}
			return s
		},
	},
	{
		Name: "gemm_splitk_by_m", Kind: KindGEMM, Dim: "rows",
		Models: "cuBLAS/CUTLASS heuristics choose split-K by M: small M splits K to fill the SMs (M <= 64: 4, M <= 256: 2, else 1)",
		Policy: func(c Call, s Schedule) Schedule {
			switch {
			case c.Rows <= 64:
				s.GEMM = oracle.GEMMSchedule{SplitK: 4}
			case c.Rows <= 256:
				s.GEMM = oracle.GEMMSchedule{SplitK: 2}
			default:
				s.GEMM = oracle.GEMMSchedule{SplitK: 1}
			}
			return s
		},
	},
	{
		Name: "attn_tile_48_64", Kind: KindAttention, Dim: "path", Needs: Gen{MinSeqLen: 56},
		Models: "the trainer's FlashAttention uses KV tile 64, the engine's generation tile 48: identical up to 48 KV tokens, different from 49",
		Policy: func(c Call, s Schedule) Schedule {
			s.Attention.Tile = 64
			if c.Path == Infer {
				s.Attention.Tile = 48
			}
			return s
		},
	},
	{
		Name: "decode_splits_by_batch", Kind: KindAttention, Dim: "batch", Needs: Gen{MinSeqLen: 24},
		Models: "FlashAttention/FlashInfer split-KV decode chooses num_splits by the batch size (padded batch <= 64: 4 splits, <= 128: 2, else 1)",
		Policy: func(c Call, s Schedule) Schedule {
			if c.Phase != Decode {
				return s
			}
			switch {
			case c.Rows <= 64:
				s.Attention.Splits = 4
			case c.Rows <= 128:
				s.Attention.Splits = 2
			}
			return s
		},
	},
}

// LookupDriftModel returns the drift model named name.
func LookupDriftModel(name string) (DriftModel, error) {
	for _, m := range DriftModels {
		if m.Name == name {
			return m, nil
		}
	}
	names := make([]string, len(DriftModels))
	for i, m := range DriftModels {
		names[i] = m.Name
	}
	return DriftModel{}, fmt.Errorf("unknown drift model %q (have %s)", name, strings.Join(names, ", "))
}

// ParseKernels reads a kernel spec: "fixed" (base, the case's fixed
// schedules) or "fixed+<drift model>@<site>", e.g.
// "fixed+gemm_splitk_by_m@L1.mlp_up", optionally prefixed with the backend
// the ops run on: "cuda/fixed" (RegisterBackend; no prefix or "cpu/": the
// CPU oracle).
func ParseKernels(spec string, base Fixed) (Kernels, error) {
	if backend, rest, ok := strings.Cut(spec, "/"); ok {
		if strings.Contains(rest, "/") {
			return nil, fmt.Errorf("kernels %q: at most one backend prefix", spec)
		}
		k, err := ParseKernels(rest, base)
		if err != nil {
			return nil, err
		}
		if backend == CPU {
			return k, nil
		}
		ops, err := openBackend(backend)
		if err != nil {
			return nil, fmt.Errorf("kernels %q: %w", spec, err)
		}
		return OnBackend{Kernels: k, Name: backend, Ops: ops}, nil
	}
	head, plant, ok := strings.Cut(spec, "+")
	if head != "fixed" {
		return nil, fmt.Errorf("kernels %q: want fixed or fixed+<model>@<site>", spec)
	}
	if !ok {
		return base, nil
	}
	name, at, ok := strings.Cut(plant, "@")
	if !ok {
		return nil, fmt.Errorf("kernels %q: plant %q: want <model>@<site>", spec, plant)
	}
	m, err := LookupDriftModel(name)
	if err != nil {
		return nil, fmt.Errorf("kernels %q: %w", spec, err)
	}
	site, err := ParseSite(at)
	if err != nil {
		return nil, fmt.Errorf("kernels %q: %w", spec, err)
	}
	if site.Op.Kind() != m.Kind {
		return nil, fmt.Errorf("kernels %q: %s is a %s kernel, %s runs %s", spec, m.Name, m.Kind, site, site.Op.Kind())
	}
	return Planted{Base: base, Model: m, At: site}, nil
}
