package gen

import (
	"math/rand"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
)

// opGen is the generator's draws an op package's steps call (ops.Gen),
// from the case's stream r.
type opGen struct{ r *rand.Rand }

var _ ops.Gen = opGen{}

func (g opGen) Intn(n int) int     { return g.r.Intn(n) }
func (opGen) Work(c spec.Case) int { return rowWork(c) }
func (g opGen) Eps() float32       { return drawEps(g.r) }
func (g opGen) SmallPow2() int     { return drawSmallPow2(g.r) }
func (opGen) MinHeadDim() int      { return headDims[0] }
func (g opGen) Rows(max int) int   { return drawRows(g.r, max) }
func (g opGen) Hidden(max int) int { return drawHidden(g.r, max) }
func (g opGen) Vocab(max int) int  { return drawVocab(g.r, max) }
func (g opGen) KV(max int) int     { return drawKV(g.r, max) }

// HeadDim is 64 with probability 60%, 128 30%, 256 10%.
func (g opGen) HeadDim() int {
	if p := g.r.Intn(10); p >= 6 {
		return headDims[1+p/9]
	}
	return headDims[0]
}

// drawer returns the op package of op, which draws its own fields; it
// panics for an op no package holds (callers check the op first).
func drawer(op spec.Op) ops.CaseOp {
	k, ok := all.Case(op)
	if !ok {
		panic("gen: op " + string(op) + " has no op package")
	}
	return k
}
