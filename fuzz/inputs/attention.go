package inputs

import (
	"fmt"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The attention ops have one item per decode request or prefill sequence.
// Their recipe, for the case's generator version (every tensor σ 1), is
// their op package's (ops.CaseOp.Tensors and FromSeed):
//
//	attn_decode   q: tensor q, the case's dist, Heads·HeadDim values a
//	              request, row key = item;
//	              k: tensor k, the case's dist, and v: tensor v, normal:
//	              Shape.KVLen(item) rows of KVHeads·HeadDim, row key =
//	              item<<32 | position
//	attn_prefill  q (Heads·HeadDim wide), k and v (KVHeads·HeadDim wide):
//	              tensors q and k (the case's dist) and v (normal), SeqLen
//	              rows a sequence, row key = item<<32 | position

// attnTensors returns the recipes of attention's Q, K and V, in that order.
func attnTensors(c spec.Case) []target.ItemTensor {
	k, _ := all.Case(c.Op)
	var ts []target.ItemTensor
	for _, t := range k.Tensors(c) {
		ts = append(ts, target.ItemTensor(t))
	}
	return ts
}

// attnInputs sets b's Input for attention case c with len(ids) items,
// item i being the case's item ids[i] (nil ids: the case's own items): the
// sizes, after the shape and memory-budget checks, and, unless lazy, Q, K
// and V. Boundary nudging is the caller's.
func attnInputs(c spec.Case, b *target.Batch, ids []int, lazy bool) error {
	k, ok := all.Case(c.Op)
	if !ok || k.Token() {
		return fmt.Errorf("op %s is not an attention op", c.Op)
	}
	return seededInputs(k, c, b, ids, lazy, nil)
}
