package target

import (
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Batch is one op's inputs, ready to run on any target. Values are of
// dtype In (exact in fp32).
type Batch struct {
	Op  spec.Op
	In  oracle.DType
	Out oracle.DType

	// Input is the op's one input value, of the type the op package of
	// Op holds (ops.CaseOp.Holds; *oracle.RMSNormInput for rmsnorm), made
	// by that package (FromSeed, FromData, Gather and its siblings). Read
	// it through the op's ops.CaseOp methods (Kind), or with a type
	// assertion where the concrete type is needed.
	Input ops.In

	// Layout is how an attention engine holds the batch: chunked
	// prefill, paged decode (the zero value: whole prompts, the target's
	// own page size). Only targets whose Info.Layouts is set read it.
	Layout Layout

	// Source, when set, is where the values come from (source.go); a
	// lazy batch has sizes only until Materialize.
	Source *Source
	lazy   *lazy
}

// Layout is how an attention engine holds a batch beyond its tensors.
type Layout struct {
	// ChunkFrom (attn_prefill): the query positions below it were
	// prefilled by earlier chunks; the batch's rows at positions >=
	// ChunkFrom are this chunk's, attending to the cached K and V of
	// positions < ChunkFrom and to the chunk's own. 0: a whole prompt.
	ChunkFrom int
	// PageSize (attn_decode): the tokens of a page of the paged KV cache
	// (0: the target's own).
	PageSize int
}

// kind returns the op package of b.Op (ops/all.Cases); ok is false for an
// op no package holds.
func (b *Batch) kind() (ops.CaseOp, bool) { return all.Case(b.Op) }

// Kind returns the op package of b.Op and b's input, or an error when no
// package holds the op or b has no input of it (Validate).
func (b *Batch) Kind() (ops.CaseOp, ops.In, error) {
	k, ok := b.kind()
	if !ok {
		return nil, nil, fmt.Errorf("batch: unknown op %q", b.Op)
	}
	if !k.Holds(b.Input) {
		return nil, nil, fmt.Errorf("batch: op %s has no %s input", b.Op, b.Op)
	}
	return k, b.Input, nil
}

// With returns a batch of b's op and dtypes (no layout, no source) whose
// input is in: a value the op package made from b's (ops.CaseOp.Gather
// and its siblings).
func (b *Batch) With(in ops.In) *Batch {
	return &Batch{Op: b.Op, In: b.In, Out: b.Out, Input: in}
}

// size is size(k, in) for b's op package k and input in (Kind), or none
// for a batch Validate refuses.
func (b *Batch) size(none int, size func(ops.CaseOp, ops.In) int) int {
	k, in, err := b.Kind()
	if err != nil {
		return none
	}
	return size(k, in)
}

// Rows returns the number of output rows of the batch (the row contract of
// its op); 0 for a batch Validate refuses.
func (b *Batch) Rows() int { return b.size(0, ops.CaseOp.Rows) }

// Cols returns the number of output values per row.
func (b *Batch) Cols() int { return b.size(0, ops.CaseOp.Cols) }

// OutDType is the dtype the op's outputs are exact in (log-probs are fp32).
func (b *Batch) OutDType() oracle.DType {
	if k, ok := b.kind(); ok {
		return k.OutDType(b.Out)
	}
	return b.Out
}

// Validate checks that Input is a non-nil input of the op package of Op.
func (b *Batch) Validate() error {
	_, _, err := b.Kind()
	return err
}

// An item is the unit a batch is made of: a token for rmsnorm, gemm and
// logprob (one output row), a request for decode (Heads output rows), a
// sequence for prefill (SeqLen·Heads output rows). Relations build batches
// by copying items, so a row's inputs are the same bits in every batch.

// Items returns the number of items of b.
func (b *Batch) Items() int { return b.size(0, ops.CaseOp.Items) }

// RowsPerItem returns the number of output rows of one item; item i owns
// output rows [i·RowsPerItem, (i+1)·RowsPerItem).
func (b *Batch) RowsPerItem() int { return b.size(1, ops.CaseOp.RowsPerItem) }

// ItemValues returns the number of input values one item of b holds (a
// lazy decode batch's first item: its KV length from the source case).
func (b *Batch) ItemValues() int {
	k, in, err := b.Kind()
	if err != nil {
		return 0
	}
	firstKV := -1
	if info, ok := b.Op.Info(); ok && info.KVLens && b.Lazy() {
		firstKV = b.Source.Case.Shape.KVLen(int(b.Source.Key(0)))
	}
	return k.ItemValues(in, firstKV)
}

// Rows0 returns rows, or all rows of b when rows is nil.
func (b *Batch) Rows0(rows []int) []int {
	if rows != nil {
		return rows
	}
	return spec.Iota(b.Rows())
}
