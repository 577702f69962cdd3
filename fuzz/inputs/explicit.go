package inputs

import (
	"fmt"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// explicitInputs builds the batch of a case that carries its tensors as hex
// bits (spec.Data), read by its op package (ops.CaseOp.FromData). Tensor
// names: rmsnorm x, w; gemm x, w; logprob logits, targets (decimal);
// attention q, k, v (decode: k and v concatenated over requests in
// request order, lengths from the shape).
func explicitInputs(c spec.Case, in, out oracle.DType) (*target.Batch, error) {
	k, ok := all.Case(c.Op)
	if !ok {
		return nil, fmt.Errorf("unknown op %q", c.Op)
	}
	x, err := k.FromData(c, out, explicitData{c: c, in: in})
	if err != nil {
		return nil, err
	}
	return (&target.Batch{Op: c.Op, In: in, Out: out}).With(x), nil
}

// explicitData reads case c's hex tensors in dtype in (ops.Explicit).
type explicitData struct {
	c  spec.Case
	in oracle.DType
}

func (e explicitData) Tensor(name string, want int) ([]float32, error) {
	hex, ok := e.c.Data.Tensors[name]
	if !ok {
		return nil, fmt.Errorf("explicit data: tensor %q missing", name)
	}
	if len(hex) != want {
		return nil, fmt.Errorf("explicit data: tensor %q has %d values, shape %+v needs %d", name, len(hex), e.c.Shape, want)
	}
	vals := make([]float32, want)
	for i, h := range hex {
		v, err := oracle.ParseHex(e.in, h)
		if err != nil {
			return nil, fmt.Errorf("explicit data: tensor %q value %d: %w", name, i, err)
		}
		vals[i] = v
	}
	return vals, nil
}

func (e explicitData) Budget(counts ...int) error { return Budget(e.c, counts...) }
