package ops

import "github.com/bitparity/bitparity/spec"

// TokenOp is what every token op (Token true: gemm, rmsnorm, logprob)
// answers alike, embedded by those ops: its batch dimension is rows
// (RowsBatch); an item is one output row; a filler item cycles through
// the items; its oracle has no layouts; a small draw may cost
// casecost.Small once and a residue case follows every one of
// casecost.ResidueEvery small draws; path parity compares every row, on
// no other op.
type TokenOp struct{ RowsBatch }

// RowsPerItem is 1.
func (TokenOp) RowsPerItem(In) int { return 1 }

// Layouts is false.
func (TokenOp) Layouts() bool { return false }

// PadFirst is false.
func (TokenOp) PadFirst() bool { return false }

// Token is true.
func (TokenOp) Token() bool { return true }

// SmallScale is 1.
func (TokenOp) SmallScale() int64 { return 1 }

// ResidueDraws is 1.
func (TokenOp) ResidueDraws() uint64 { return 1 }

// Path is every row, on no other op.
func (TokenOp) Path(In) Path { return Path{} }

// PathNext is none.
func (TokenOp) PathNext() spec.Op { return "" }
