// Package profile names a model's dimensions once (hidden size, heads, KV
// heads, head dim, vocabulary, MLP width, tokens per step), so campaigns
// and scans draw the inner sizes a real model runs while they vary the
// batch dimensions. Profiles of a few public architectures are embedded
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
	// MaxTokens is the most tokens one engine step batches (a serving
	// setting, not part of the model's config): the largest batch a scan
	// of this profile sweeps by default.
	MaxTokens int `json:"max_tokens"`
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

// Validate checks that every dimension is positive and the query heads
// are a multiple of the KV heads.
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
	switch op {
	case spec.OpRMSNorm:
		return []spec.Shape{{Hidden: p.Hidden}}
	case spec.OpGEMM:
		var s []spec.Shape
		for _, pr := range p.Projections() {
			s = append(s, spec.Shape{Hidden: pr.K, N: pr.N})
		}
		return s
	case spec.OpLogProb:
		return []spec.Shape{{Vocab: p.Vocab}}
	case spec.OpAttnPrefill, spec.OpAttnDecode:
		return []spec.Shape{{Heads: p.Heads, KVHeads: p.KVHeads, HeadDim: p.HeadDim}}
	}
	return nil
}

// Apply sets the inner sizes of a drawn case to this model's (a gemm
// takes one projection drawn from r) and keeps its batch dimensions (rows,
// requests, sequences, KV and sequence lengths) and relation parameters.
func (p *Profile) Apply(r *rand.Rand, c *spec.Case) {
	shapes := p.Shapes(c.Op)
	if len(shapes) == 0 {
		return
	}
	in := shapes[r.Intn(len(shapes))]
	s := &c.Shape
	switch c.Op {
	case spec.OpRMSNorm:
		s.Hidden = in.Hidden
	case spec.OpGEMM:
		s.Hidden, s.N = in.Hidden, in.N
	case spec.OpLogProb:
		s.Vocab = in.Vocab
	case spec.OpAttnPrefill, spec.OpAttnDecode:
		s.Heads, s.KVHeads, s.HeadDim = in.Heads, in.KVHeads, in.HeadDim
	}
}
