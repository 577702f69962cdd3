// Package profile names a model's dimensions once (hidden size, heads, KV
// heads, head dim, vocabulary, MLP width, tokens per step) with its
// training dtype and RMSNorm epsilon, so campaigns and scans draw the inner
// sizes and dtypes a real model runs while they vary the batch dimensions. Profiles of a few public architectures are embedded
// (models/*.json, dimensions from each model's public config.json); a
// profile file of the same form can be given by path.
package profile

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
)

// Profile is one model's dimensions.
type Profile struct {
	Name   string `json:"name"`
	Model  string `json:"model"`            // the model it describes, "meta-llama/Meta-Llama-3-8B"
	Source string `json:"source,omitempty"` // where the dimensions come from
	// Hidden is the model width (RMSNorm rows, the K of the projections),
	// Intermediate the MLP width.
	Hidden       int `json:"hidden"`
	Intermediate int `json:"intermediate"`
	Heads        int `json:"heads"`
	KVHeads      int `json:"kv_heads"`
	HeadDim      int `json:"head_dim"`
	Vocab        int `json:"vocab"`
	// DType is the model's training dtype (torch_dtype in its config):
	// the In and Out of every case drawn at the profile (logprob reads its
	// logits in it and writes fp32; logprob_parity compares in it). Eps is
	// its RMSNorm epsilon (rms_norm_eps).
	DType spec.DType `json:"dtype"`
	Eps   float32    `json:"eps"`
	// MaxTokens is the most tokens one engine step batches (a serving
	// setting, not part of the model's config): the largest batch a scan
	// of this profile sweeps by default.
	MaxTokens int `json:"max_tokens"`
	// Experts and TopK are a mixture-of-experts model's routed experts and
	// the experts each token is routed to (config.json's num_experts,
	// num_local_experts or n_routed_experts, and num_experts_per_tok);
	// zero in a dense model. Routing says how the model's router differs
	// from moe_route's softmax then top-k (ops/moeroute), when it does.
	Experts int    `json:"experts,omitempty"`
	TopK    int    `json:"top_k,omitempty"`
	Routing string `json:"routing,omitempty"`
}

// Dim returns the inner size called name (an op package's dimension:
// ops.Record.Dims), false when the profile has none: hidden,
// intermediate, vocab, and an MoE model's experts and top_k.
func (p *Profile) Dim(name string) (int, bool) {
	v := map[string]int{"hidden": p.Hidden, "intermediate": p.Intermediate, "vocab": p.Vocab,
		"experts": p.Experts, "top_k": p.TopK}[name]
	return v, v > 0
}

//go:embed models/*.json
var models embed.FS

// Names lists the embedded profiles, sorted.
func Names() []string {
	ents, _ := models.ReadDir("models")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	slices.Sort(names)
	return names
}

// Load returns the embedded profile called name, or reads the profile
// file at name when it is a path (it contains a / or ends in .json).
func Load(name string) (*Profile, error) {
	var data []byte
	var err error
	if strings.Contains(name, "/") || strings.HasSuffix(name, ".json") {
		data, err = os.ReadFile(name)
	} else {
		data, err = models.ReadFile(path.Join("models", name+".json"))
		if err != nil {
			return nil, fmt.Errorf("profile %q: unknown (embedded: %s; or give a file path)", name, strings.Join(Names(), ", "))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	return &p, nil
}

// Validate checks that every dimension is positive, the query heads are
// a multiple of the KV heads, experts and top_k are both zero or 1 <=
// top_k <= experts, the dtype is bf16, fp16 or fp32 and the epsilon is
// positive.
func (p *Profile) Validate() error {
	for _, d := range []struct {
		name string
		v    int
	}{{"hidden", p.Hidden}, {"intermediate", p.Intermediate}, {"heads", p.Heads}, {"kv_heads", p.KVHeads},
		{"head_dim", p.HeadDim}, {"vocab", p.Vocab}, {"max_tokens", p.MaxTokens}} {
		if d.v < 1 {
			return fmt.Errorf("%s = %d, want >= 1", d.name, d.v)
		}
	}
	if p.Heads%p.KVHeads != 0 {
		return fmt.Errorf("heads %d is not a multiple of kv_heads %d", p.Heads, p.KVHeads)
	}
	switch p.DType {
	case spec.BF16, spec.FP16, spec.FP32:
	case "":
		return fmt.Errorf("dtype is missing: want the model's training dtype, bf16, fp16 or fp32")
	default:
		return fmt.Errorf("dtype %q, want bf16, fp16 or fp32", p.DType)
	}
	if p.Experts < 0 || p.TopK < 0 || (p.Experts == 0) != (p.TopK == 0) || p.TopK > p.Experts {
		return fmt.Errorf("experts = %d, top_k = %d: want both zero (a dense model) or 1 <= top_k <= experts", p.Experts, p.TopK)
	}
	if !(p.Eps > 0) {
		return fmt.Errorf("eps = %g, want the model's rms_norm_eps (> 0)", p.Eps)
	}
	return nil
}

// Projection is one GEMM of a decoder layer: y = x·W with W of K x N.
type Projection struct {
	Name string
	K, N int
}

// Projections are the GEMMs of one decoder layer and the LM head:
//
//	qkv      K = hidden,           N = (heads + 2·kv_heads)·head_dim
//	o        K = heads·head_dim,   N = hidden
//	gate_up  K = hidden,           N = 2·intermediate
//	down     K = intermediate,     N = hidden
//	lm_head  K = hidden,           N = vocab
func (p *Profile) Projections() []Projection {
	return []Projection{
		{"qkv", p.Hidden, (p.Heads + 2*p.KVHeads) * p.HeadDim},
		{"o", p.Heads * p.HeadDim, p.Hidden},
		{"gate_up", p.Hidden, 2 * p.Intermediate},
		{"down", p.Intermediate, p.Hidden},
		{"lm_head", p.Hidden, p.Vocab},
	}
}

// Shapes returns the inner sizes of op in this model, one shape per
// distinct use (gemm: one per projection); batch dimensions stay zero.
func (p *Profile) Shapes(op spec.Op) []spec.Shape {
	k, ok := all.Case(op)
	if !ok {
		return nil
	}
	var projections []spec.Shape
	for _, pr := range p.Projections() {
		projections = append(projections, spec.Shape{Hidden: pr.K, N: pr.N})
	}
	model := spec.Shape{Hidden: p.Hidden, Vocab: p.Vocab, Heads: p.Heads, KVHeads: p.KVHeads, HeadDim: p.HeadDim}
	return k.ModelShapes(model, projections)
}

// Apply sets the inner sizes of a drawn case to this model's (a gemm
// takes one projection drawn from r), its dtypes to the model's DType
// (logprob: In and a declared Compare; Out stays fp32) and an rmsnorm's
// Eps to the model's, and keeps its batch dimensions (rows, requests,
// sequences, KV and sequence lengths) and relation parameters.
func (p *Profile) Apply(r *rand.Rand, c *spec.Case) {
	shapes := p.Shapes(c.Op)
	if len(shapes) == 0 {
		return
	}
	k, _ := all.Case(c.Op)
	k.AtModel(c, p.DType, p.Eps, shapes[r.Intn(len(shapes))])
}

// Holds reports whether case c is at this model's shape: its inner sizes
// are one of Shapes(c.Op), its dtypes the model's (as Apply sets them)
// and an rmsnorm's Eps the model's. The error names the first that is
// not.
func (p *Profile) Holds(c spec.Case) error {
	var want spec.Case
	want.Op, want.Compare, want.Eps = c.Op, c.Compare, c.Eps // Apply sets an rmsnorm's Eps
	p.Apply(rand.New(rand.NewSource(0)), &want)
	if c.In != want.In || c.Out != want.Out || c.Compare != want.Compare {
		return fmt.Errorf("dtypes in %s out %s compare %q, want the profile's in %s out %s compare %q",
			c.In, c.Out, c.Compare, want.In, want.Out, want.Compare)
	}
	if c.Eps != want.Eps {
		return fmt.Errorf("eps %g, want the profile's %g", c.Eps, p.Eps)
	}
	s := c.Shape
	for _, in := range p.Shapes(c.Op) {
		if s.Hidden == in.Hidden && s.N == in.N && s.Vocab == in.Vocab &&
			s.Heads == in.Heads && s.KVHeads == in.KVHeads && s.HeadDim == in.HeadDim {
			return nil
		}
	}
	return fmt.Errorf("%s inner sizes hidden %d n %d vocab %d heads %d kv_heads %d head_dim %d are not the profile's %+v",
		c.Op, s.Hidden, s.N, s.Vocab, s.Heads, s.KVHeads, s.HeadDim, p.Shapes(c.Op))
}
