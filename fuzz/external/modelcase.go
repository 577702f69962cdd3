package external

import (
	"fmt"

	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// ModelOp is the op of a model-route case (spec.OpModel): the case names
// one model route (Targets = ["exec:NAME.transformer"]) and the shape of
// the plan, encoded as a transformer case is (docs/transformer.md):
// shape.rows layers, hidden, n (ffn), vocab, heads, kv_heads, head_dim,
// seqs requests of up to seq_len tokens (transformer.Plan of seed), in,
// out (the training dtype), compare, eps, rel.pad (the decode batch
// granularity; 0: 64), rel.mask (empty: the positions the engine
// reported).
const ModelOp = spec.OpModel

// FieldError is a model case's invalid field, named as in the case's JSON
// ("shape.rows", "rel.pad").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return "model case: " + e.Field + ": " + e.Msg }

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// ValidateModelCase checks what a model-route case asks of an adapter,
// before anything runs: op model, no explicit data (the plan derives from
// the seed), one target, relation logprob_parity or path_parity (empty:
// logprob_parity), every dimension within spec's model bounds
// (spec.MaxModelLayers and the rest), heads a multiple of kv_heads, seq_len
// >= 2 (a prompt and a response), at most spec.MaxElements parameters
//
//	vocab·hidden·2 + layers·(hidden·(heads+2·kv_heads)·head_dim + heads·head_dim·hidden + 3·hidden·ffn)
//
// and at most spec.MaxElements activations at one tap site (seqs·seq_len
// tokens times the widest of hidden, ffn, vocab and heads·head_dim),
// rel.pad in 0..spec.MaxModelPad, at most spec.MaxListLen rel.mask
// positions, each below seqs·(seq_len-1) (the response positions a plan
// can have; the run checks the plan's exact count), and every field the
// route does not read (shape.kv, shape.kv_lens, rel.row, rel.batch,
// rel.position, rel.filler, rel.perm_seed) zero. Errors are *FieldError.
func ValidateModelCase(c spec.Case) error {
	if c.Op != ModelOp {
		return fieldErr("op", "%q, want %q", c.Op, ModelOp)
	}
	if c.Data != nil {
		return fieldErr("data", "explicit data is not supported: the plan derives from the seed")
	}
	if len(c.Targets) != 1 {
		return fieldErr("targets", "%d targets, want one model route", len(c.Targets))
	}
	if r := c.Relation; r != "" && r != spec.RelLogProbParity && r != spec.RelPathParity {
		return fieldErr("relation", "%q, want %s or %s", r, spec.RelLogProbParity, spec.RelPathParity)
	}
	s := c.Shape
	for _, d := range []struct {
		name   string
		v, max int
	}{{"rows", s.Rows, spec.MaxModelLayers}, {"hidden", s.Hidden, spec.MaxModelHidden}, {"n", s.N, spec.MaxModelFFN},
		{"vocab", s.Vocab, spec.MaxModelVocab}, {"heads", s.Heads, spec.MaxModelHeads}, {"kv_heads", s.KVHeads, spec.MaxModelHeads},
		{"head_dim", s.HeadDim, spec.MaxModelHeadDim}, {"seqs", s.Seqs, spec.MaxModelRequests}, {"seq_len", s.SeqLen, spec.MaxModelSeqLen}} {
		if d.v < 1 || d.v > d.max {
			return fieldErr("shape."+d.name, "%d, want 1..%d (%s)", d.v, d.max, modelDims[d.name])
		}
	}
	if s.SeqLen < 2 {
		return fieldErr("shape.seq_len", "%d, want >= 2 (a prompt and a response)", s.SeqLen)
	}
	if s.Heads%s.KVHeads != 0 {
		return fieldErr("shape.heads", "%d is not a multiple of kv_heads %d", s.Heads, s.KVHeads)
	}
	if s.KV != 0 || len(s.KVLens) > 0 {
		return fieldErr("shape.kv", "not read by op %s: want it absent", ModelOp)
	}
	lim := spec.MaxElements
	qkv := satMul(s.Hidden, s.Heads+2*s.KVHeads, s.HeadDim)
	perLayer := satAdd(qkv, satMul(s.Heads, s.HeadDim, s.Hidden), satMul(3, s.Hidden, s.N))
	if p := satAdd(satMul(2, s.Vocab, s.Hidden), satMul(s.Rows, perLayer)); p > lim {
		return fieldErr("shape", "a model of %s needs more than %d parameters, the limit of one case", modelWords(s), lim)
	}
	width := max(s.Hidden, s.N, s.Vocab, s.Heads*s.HeadDim)
	if a := satMul(s.Seqs, s.SeqLen, width); a > lim {
		return fieldErr("shape", "%d requests of up to %d tokens at width %d need more than %d activations at one tap site, the limit of one case",
			s.Seqs, s.SeqLen, width, lim)
	}
	r := c.Rel
	if r.Pad < 0 || r.Pad > spec.MaxModelPad {
		return fieldErr("rel.pad", "%d, want 0..%d (0: 64)", r.Pad, spec.MaxModelPad)
	}
	if len(r.Mask) > spec.MaxListLen {
		return fieldErr("rel.mask", "%d entries, want at most %d", len(r.Mask), spec.MaxListLen)
	}
	positions := s.Seqs * (s.SeqLen - 1)
	for i, q := range r.Mask {
		if q < 0 || q >= positions {
			return fieldErr(fmt.Sprintf("rel.mask[%d]", i), "%d, want a response position in [0,%d)", q, positions)
		}
	}
	for _, u := range []struct {
		name string
		set  bool
	}{{"row", r.Row != 0}, {"batch", r.Batch != 0}, {"position", r.Position != 0}, {"filler", r.Filler != ""}, {"perm_seed", r.PermSeed != 0}} {
		if u.set {
			return fieldErr("rel."+u.name, "not read by op %s: want it absent", ModelOp)
		}
	}
	return nil
}

// modelDims says what each shape field of a model case means.
var modelDims = map[string]string{"rows": "layers", "hidden": "model width", "n": "MLP width", "vocab": "vocabulary",
	"heads": "query heads", "kv_heads": "key/value heads", "head_dim": "head dim", "seqs": "requests", "seq_len": "longest request"}

func modelWords(s spec.Shape) string {
	return fmt.Sprintf("%d layers, hidden %d, ffn %d, vocab %d, %d heads (%d kv) of %d", s.Rows, s.Hidden, s.N, s.Vocab, s.Heads, s.KVHeads, s.HeadDim)
}

// satMul and satAdd compute with non-negative ints, saturating at
// spec.MaxElements+1 (so a product of hostile dimensions cannot overflow).
func satMul(xs ...int) int {
	p := 1
	for _, x := range xs {
		if x == 0 {
			return 0
		}
		if p > (spec.MaxElements+1)/x {
			return spec.MaxElements + 1
		}
		p *= x
	}
	return p
}

func satAdd(xs ...int) int {
	s := 0
	for _, x := range xs {
		s = min(s+x, spec.MaxElements+1)
	}
	return s
}

// PlanOf returns the plan of model-route case c (ValidateModelCase first).
func PlanOf(c spec.Case) (ModelPlan, error) {
	if err := ValidateModelCase(c); err != nil {
		return ModelPlan{}, err
	}
	in, err := oracle.ParseDType(string(c.In))
	if err != nil {
		return ModelPlan{}, fmt.Errorf("model case: in: %w", err)
	}
	out, err := oracle.ParseDType(string(c.Out))
	if err != nil {
		return ModelPlan{}, fmt.Errorf("model case: out: %w", err)
	}
	s := c.Shape
	pad := c.Rel.Pad
	if pad == 0 {
		pad = 64 // the engine's default, as in fuzz/transformer
	}
	return ModelPlan{Layers: s.Rows, Hidden: s.Hidden, FFN: s.N, Vocab: s.Vocab, Heads: s.Heads, KVHeads: s.KVHeads,
		HeadDim: s.HeadDim, Pad: pad, Seed: c.Seed, In: in, Out: out, Eps: c.Eps,
		Requests: transformer.Plan(c.Seed, s.Seqs, s.SeqLen, s.Vocab)}, nil
}
