package gemm

import (
	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Column is the output column of item item of case c that the boundary
// and sensitive draws tune and a row's power is measured on:
// mix(seed ^ item) % N.
func Column(c spec.Case, item uint64, mix func(uint64) uint64) int {
	return int(mix(c.Seed^item) % uint64(max(c.Shape.N, 1)))
}

// Nudge tunes, in row i, its Column (boundary.GEMMRow); odd items aim one
// fp32 ulp to the odd side of the midpoint.
func (Op) Nudge(c spec.Case, in ops.In, dt, out oracle.DType, n ops.Nudger) error {
	g := input(in)
	n.Each(g.M, func(i int, item uint64) {
		boundary.GEMMRow(g.X[i*g.K:(i+1)*g.K], g.W, g.N, Column(c, item, n.Mix), dt, out, OracleSchedule, item%2 == 1)
	})
	return nil
}
