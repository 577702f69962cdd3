package rmsnorm

import (
	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Nudge nudges every row with boundary.RMSNormRows (probes + 3 knobs);
// odd items aim one fp32 ulp to the odd side of the midpoint.
func (Op) Nudge(_ spec.Case, in ops.In, dt, out oracle.DType, n ops.Nudger) error {
	x := input(in)
	rows := boundary.NewRMSNormRows(x.W, x.Eps, dt, out, OracleSchedule)
	n.Each(x.Rows, func(i int, item uint64) {
		rows.Nudge(x.X[i*x.Hidden:(i+1)*x.Hidden], item%2 == 1)
	})
	return nil
}
