package target

import (
	"fmt"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Batch is one op's inputs, ready to run on any target. Exactly one of the
// op fields is set, matching Op. Values are of dtype In (exact in fp32).
type Batch struct {
	Op  spec.Op
	In  oracle.DType
	Out oracle.DType

	RMSNorm *oracle.RMSNormInput
	GEMM    *oracle.GEMMInput
	LogProb *oracle.LogProbInput
	Prefill *oracle.PrefillInput
	Decode  *oracle.DecodeInput

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

// Rows returns the number of output rows of the batch (the row contract of
// its op).
func (b *Batch) Rows() int {
	switch b.Op {
	case spec.OpRMSNorm:
		return b.RMSNorm.Rows
	case spec.OpGEMM:
		return b.GEMM.M
	case spec.OpLogProb:
		return b.LogProb.Rows
	case spec.OpAttnPrefill:
		return b.Prefill.Rows()
	case spec.OpAttnDecode:
		return b.Decode.Rows()
	}
	return 0
}

// Cols returns the number of output values per row.
func (b *Batch) Cols() int {
	switch b.Op {
	case spec.OpRMSNorm:
		return b.RMSNorm.Hidden
	case spec.OpGEMM:
		return b.GEMM.N
	case spec.OpLogProb:
		return 1
	case spec.OpAttnPrefill:
		return b.Prefill.HeadDim
	case spec.OpAttnDecode:
		return b.Decode.HeadDim
	}
	return 0
}

// OutDType is the dtype the op's outputs are exact in (log-probs are fp32).
func (b *Batch) OutDType() oracle.DType {
	if b.Op == spec.OpLogProb {
		return oracle.FP32
	}
	return b.Out
}

// Validate checks that the op field matching Op is set.
func (b *Batch) Validate() error {
	ok := false
	switch b.Op {
	case spec.OpRMSNorm:
		ok = b.RMSNorm != nil
	case spec.OpGEMM:
		ok = b.GEMM != nil
	case spec.OpLogProb:
		ok = b.LogProb != nil
	case spec.OpAttnPrefill:
		ok = b.Prefill != nil
	case spec.OpAttnDecode:
		ok = b.Decode != nil
	default:
		return fmt.Errorf("batch: unknown op %q", b.Op)
	}
	if !ok {
		return fmt.Errorf("batch: op %s has no %s input", b.Op, b.Op)
	}
	return nil
}

// An item is the unit a batch is made of: a token for rmsnorm, gemm and
// logprob (one output row), a request for decode (Heads output rows), a
// sequence for prefill (SeqLen·Heads output rows). Relations build batches
// by copying items, so a row's inputs are the same bits in every batch.

// Items returns the number of items of b.
func (b *Batch) Items() int {
	switch b.Op {
	case spec.OpAttnDecode:
		return len(b.Decode.K)
	case spec.OpAttnPrefill:
		return b.Prefill.Seqs
	}
	return b.Rows()
}

// RowsPerItem returns the number of output rows of one item; item i owns
// output rows [i·RowsPerItem, (i+1)·RowsPerItem).
func (b *Batch) RowsPerItem() int {
	switch b.Op {
	case spec.OpAttnDecode:
		return b.Decode.Heads
	case spec.OpAttnPrefill:
		return b.Prefill.SeqLen * b.Prefill.Heads
	}
	return 1
}

// ItemValues returns the number of input values one item of b holds (a
// lazy decode batch's first item: its KV length from the source case).
func (b *Batch) ItemValues() int {
	switch b.Op {
	case spec.OpRMSNorm:
		return b.RMSNorm.Hidden
	case spec.OpGEMM:
		return b.GEMM.K
	case spec.OpLogProb:
		return b.LogProb.Vocab
	case spec.OpAttnDecode:
		d := b.Decode
		kv := 0
		switch {
		case b.Lazy():
			kv = b.Source.Case.Shape.KVLen(int(b.Source.Key(0))) * d.KVHeads * d.HeadDim
		case len(d.K) > 0:
			kv = len(d.K[0])
		}
		return d.Heads*d.HeadDim + 2*kv
	case spec.OpAttnPrefill:
		p := b.Prefill
		return p.SeqLen * (p.Heads + 2*p.KVHeads) * p.HeadDim
	}
	return 0
}

// Rows0 returns rows, or all rows of b when rows is nil.
func (b *Batch) Rows0(rows []int) []int {
	if rows != nil {
		return rows
	}
	all := make([]int, b.Rows())
	for i := range all {
		all[i] = i
	}
	return all
}
