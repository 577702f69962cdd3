// Package oracle is bitparity's CPU reference: numeric formats, correctly
// rounded fp32 arithmetic, portable exp and log, and the reference ops, each
// taking a schedule that fully states its reduction order.
//
// Every function's doc comment is the loop it computes, in order. Two
// implementations of an op with the same schedule (this package and a CUDA
// kernel, say) must give the same bits. The package is pure Go, has no cgo
// and imports nothing else of bitparity.
//
// Tensors are []float32 holding values exactly representable in their dtype
// (bf16 and fp16 values widen to fp32 exactly), row-major.
package oracle
