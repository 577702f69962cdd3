package e2e

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Target name prefixes: Case.Targets is ["train:<kernels>",
// "infer:<kernels>"] with <kernels> read by ParseKernels, optionally on a
// backend: "infer:cuda/fixed" (WithBackends).
const (
	TrainPrefix = "train:"
	InferPrefix = "infer:"
)

// DefaultTile is the attention tile of the fixed kernels when Shape.KV is 0.
const DefaultTile = 16

// Shape.Dims names of a transformer case with experts.
const (
	DimExperts = "experts"
	DimTopK    = "top_k"
	DimNearTie = "near_tie"
)

// Setup is everything a case says, decoded.
type Setup struct {
	Model    *Model
	Requests []Request
	Train    Kernels
	Infer    Kernels
	Engine   Engine
	// LogProbType is the declared training dtype: the train path reports
	// its log-probs rounded to it (Case.Out).
	LogProbType oracle.DType
	// Compare is the dtype the relation compares in (Case.CompareDType()).
	Compare oracle.DType
	// Mask lists the positions that count (Case.Rel.Mask); nil means all.
	Mask []int
}

// GenVersion is the generator version transformer cases record. Their
// weights and requests derive from model.go's own streams, which generator
// version 2 (package values) did not change: a transformer case of
// version 0, 1 or 2 derives the same values.
const GenVersion = 1

// CaseOp is the transformer's op in case files: the one place this package
// names it (its record is spec's op table's).
const CaseOp = spec.OpTransformer

// FromCase decodes a transformer case. The mapping of spec.Case fields:
//
//	Shape.Rows    decoder layers          Shape.Hidden  model width
//	Shape.Heads   query heads             Shape.KVHeads key/value heads
//	Shape.HeadDim head dim                Shape.N       MLP width (ffn)
//	Shape.Vocab   vocabulary              Shape.Seqs    requests
//	Shape.SeqLen  longest request (prompt + response tokens; Plan)
//	Shape.KV      attention tile of the fixed kernels (0: DefaultTile)
//	Shape.Dims    experts and top_k: every layer's MLP a mixture of
//	              experts (moe.go), near_tie 1 its sensitive router
//	              (Config.NearTie); none: the dense MLP
//	In            weights and activations dtype
//	Out           declared training dtype: the train path's log-probs
//	Compare       dtype of the comparison (empty: Out)
//	Eps           RMSNorm epsilon          Seed  weights, requests, schedules
//	Rel.Pad       CUDA-graph granularity of decode batches (0: 64)
//	Rel.Filler    filler rows' embedding: zeros (default), normal, nan, huge
//	Rel.Mask      response positions compared (positionBase order); empty: all
//	Targets       ["train:<kernels>", "infer:<kernels>"] (ParseKernels;
//	              "<path>:cuda/<kernels>" runs that path on the GPU)
//
// Dist must be empty or normal; explicit Data is not supported.
func FromCase(c spec.Case) (*Setup, error) {
	if c.Op != CaseOp {
		return nil, fmt.Errorf("transformer case: op %q, want %q", c.Op, CaseOp)
	}
	if c.Data != nil {
		return nil, fmt.Errorf("transformer case: explicit data is not supported: weights and requests derive from the seed")
	}
	if c.Dist != "" && c.Dist != spec.DistNormal {
		return nil, fmt.Errorf("transformer case: dist %q: only normal weights are derived", c.Dist)
	}
	if c.GenVersion < 0 || c.GenVersion > spec.GeneratorVersion {
		return nil, fmt.Errorf("transformer case: generator version %d, this build has versions 1 to %d", c.GenVersion, spec.GeneratorVersion)
	}
	act, err := oracle.ParseDType(string(c.In))
	if err != nil {
		return nil, fmt.Errorf("transformer case: in: %w", err)
	}
	lpType, err := oracle.ParseDType(string(c.Out))
	if err != nil {
		return nil, fmt.Errorf("transformer case: out: %w", err)
	}
	cmp, err := oracle.ParseDType(string(c.CompareDType()))
	if err != nil {
		return nil, fmt.Errorf("transformer case: compare: %w", err)
	}
	s := c.Shape
	cfg := Config{Layers: s.Rows, Hidden: s.Hidden, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim,
		FFN: s.N, Vocab: s.Vocab, Eps: c.Eps, DType: act, Experts: s.Dims[DimExperts], TopK: s.Dims[DimTopK], NearTie: s.Dims[DimNearTie] != 0}
	for d, v := range s.Dims {
		if d != DimExperts && d != DimTopK && d != DimNearTie || d == DimNearTie && v != 0 && v != 1 {
			return nil, fmt.Errorf("transformer case: shape.dims %s=%d: want %s and %s (a mixture of experts), %s 0 or 1, or none", d, v, DimExperts, DimTopK, DimNearTie)
		}
	}
	m, err := NewModel(cfg, c.Seed)
	if err != nil {
		return nil, fmt.Errorf("transformer case: %w", err)
	}
	if s.Seqs < 1 || s.Seqs > 256 || s.SeqLen < 2 || s.SeqLen > 4096 {
		return nil, fmt.Errorf("transformer case: %d requests of up to %d tokens: want 1..256 requests of 2..4096", s.Seqs, s.SeqLen)
	}
	if width := max(cfg.Hidden, cfg.qkvWidth(), 2*cfg.FFN, cfg.Vocab); s.Seqs*s.SeqLen*width > maxParams {
		return nil, fmt.Errorf("transformer case: %d requests of up to %d tokens at width %d exceed the memory budget (%d activations)",
			s.Seqs, s.SeqLen, width, maxParams)
	}
	tile := s.KV
	if tile == 0 {
		tile = DefaultTile
	}
	fixed := FixedFor(c.Seed, tile)
	if err := fixed.S.Attention.Validate(); err != nil {
		return nil, fmt.Errorf("transformer case: kv (tile): %w", err)
	}
	st := &Setup{Model: m, Requests: Plan(c.Seed, s.Seqs, s.SeqLen, s.Vocab), LogProbType: lpType, Compare: cmp,
		Engine: Engine{Pad: c.Rel.Pad}}
	if c.Rel.Pad < 0 || c.Rel.Pad > 4096 {
		return nil, fmt.Errorf("transformer case: pad %d: want 0..4096", c.Rel.Pad)
	}
	targets := c.Targets
	if len(targets) == 0 {
		targets = []string{TrainPrefix + "fixed", InferPrefix + "fixed"}
	}
	if len(targets) != 2 || !strings.HasPrefix(targets[0], TrainPrefix) || !strings.HasPrefix(targets[1], InferPrefix) {
		return nil, fmt.Errorf("transformer case: targets %q: want [%s<kernels> %s<kernels>]", targets, TrainPrefix, InferPrefix)
	}
	if st.Train, err = ParseKernels(strings.TrimPrefix(targets[0], TrainPrefix), fixed); err != nil {
		return nil, fmt.Errorf("transformer case: train: %w", err)
	}
	if st.Infer, err = ParseKernels(strings.TrimPrefix(targets[1], InferPrefix), fixed); err != nil {
		return nil, fmt.Errorf("transformer case: infer: %w", err)
	}
	for _, k := range []Kernels{st.Train, st.Infer} {
		if p, ok := planted(k); ok && p.At.Layer >= cfg.Layers {
			return nil, fmt.Errorf("transformer case: drift planted at %s but the model has %d layers", p.At, cfg.Layers)
		}
		if p, ok := planted(k); ok && slices.Contains(MoEOps, p.At.Op) && cfg.Experts == 0 {
			return nil, fmt.Errorf("transformer case: drift planted at %s but the model has no experts (shape.dims experts, top_k)", p.At)
		}
	}
	if st.Engine.Fill, err = filler(c.Rel.Filler, c.Seed, cfg.Hidden, act); err != nil {
		return nil, fmt.Errorf("transformer case: %w", err)
	}
	_, positions := positionBase(st.Requests)
	if len(c.Rel.Mask) > 0 {
		st.Mask = append([]int(nil), c.Rel.Mask...)
		for _, p := range st.Mask {
			if p < 0 || p >= positions {
				return nil, fmt.Errorf("transformer case: mask position %d outside the %d response positions", p, positions)
			}
		}
	}
	return st, nil
}

// filler returns the embedding of a filler row.
func filler(kind string, seed uint64, hidden int, dt oracle.DType) ([]float32, error) {
	f := make([]float32, hidden)
	switch kind {
	case "", "zeros":
	case "normal":
		r := newRNG(seed, streamFiller, 0)
		for i := range f {
			f[i] = oracle.Round(dt, float32(r.gauss()))
		}
	case "nan":
		for i := range f {
			f[i] = float32(math.NaN())
		}
	case "huge":
		for i := range f {
			f[i] = oracle.MaxFinite(dt)
		}
	default:
		return nil, fmt.Errorf("filler %q: want zeros, normal, nan or huge", kind)
	}
	return f, nil
}

// ReportedMask returns the positions the engine of case c reports (every
// response position of a request up to its Reported count), the mask a
// correct harness compares on.
func ReportedMask(reqs []Request) []int {
	pb, _ := positionBase(reqs)
	var mask []int
	for r, q := range reqs {
		for j := range q.Reported {
			mask = append(mask, pb[r]+j)
		}
	}
	return mask
}
