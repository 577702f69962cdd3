package fuzz

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
