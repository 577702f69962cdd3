package gemm

import (
	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Nudge tunes, in row i, column n.Mix(seed^item) % N (boundary.GEMMRow);
// odd items aim one fp32 ulp to the odd side of the midpoint.
func (Op) Nudge(c spec.Case, in ops.In, dt, out oracle.DType, n ops.Nudger) error {
	g := input(in)
	n.Each(g.M, func(i int, item uint64) {
		col := int(n.Mix(c.Seed^item) % uint64(g.N))
		boundary.GEMMRow(g.X[i*g.K:(i+1)*g.K], g.W, g.N, col, dt, out, OracleSchedule, item%2 == 1)
	})
	return nil
}
