package logprob

import (
	"fmt"

	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Nudge nudges every row in the compare dtype (boundary.LogProbRow; none
// when fp32); odd items aim one fp32 ulp to the odd side of the midpoint.
func (Op) Nudge(c spec.Case, in ops.In, dt, _ oracle.DType, n ops.Nudger) error {
	cmp, err := oracle.ParseDType(string(c.CompareDType()))
	if err != nil {
		return fmt.Errorf("boundary inputs: compare dtype: %w", err)
	}
	l := input(in)
	n.Each(l.Rows, func(i int, item uint64) {
		boundary.LogProbRow(l.Logits[i*l.Vocab:(i+1)*l.Vocab], int(l.Targets[i]), dt, cmp, OracleSchedule, item%2 == 1)
	})
	return nil
}
