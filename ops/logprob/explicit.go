package logprob

import (
	"fmt"
	"strconv"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// FromData reads tensor logits (rows·vocab values) and targets, one
// decimal id in [0, vocab) a row.
func (Op) FromData(c spec.Case, _ oracle.DType, e ops.Explicit) (ops.In, error) {
	s := c.Shape
	if err := e.Budget(spec.SatMul(s.Rows, s.Vocab)); err != nil {
		return nil, err
	}
	l := &oracle.LogProbInput{Rows: s.Rows, Vocab: s.Vocab}
	var err error
	if l.Logits, err = e.Tensor("logits", s.Rows*s.Vocab); err != nil {
		return nil, err
	}
	ids := c.Data.Tensors["targets"]
	if len(ids) != s.Rows {
		return nil, fmt.Errorf("explicit data: tensor \"targets\" has %d ids, want %d", len(ids), s.Rows)
	}
	l.Targets = make([]int32, s.Rows)
	for i, id := range ids {
		v, err := strconv.ParseInt(id, 10, 32)
		if err != nil || v < 0 || int(v) >= s.Vocab {
			return nil, fmt.Errorf("explicit data: target %d = %q: want an id in [0,%d)", i, id, s.Vocab)
		}
		l.Targets[i] = int32(v)
	}
	return l, nil
}
