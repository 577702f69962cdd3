package external

import (
	"fmt"

	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// ModelOp is the op of a model-route case, the one place this package
// names it (its record is spec's op table's): the case names
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
type FieldError = spec.FieldError

// ValidateModelCase checks what a model-route case asks of an adapter,
// before anything runs: op model, and the one case contract
// (spec.Case.Validate), whose model rules bound every dimension by spec's
// model limits (spec.MaxModelLayers and the rest), the parameters and one
// tap site's activations by spec.MaxElements, and want every field the
// route does not read zero. Errors wrap a *FieldError.
func ValidateModelCase(c spec.Case) error {
	if c.Op != ModelOp {
		return fmt.Errorf("model case: %w", &FieldError{Field: "op", Msg: fmt.Sprintf("%q, want %q", c.Op, ModelOp)})
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("model case: %w", err)
	}
	return nil
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
