package target

import (
	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/ops/gemm"
	"github.com/bitparity/bitparity/ops/logprob"
	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Drift models are negative controls: CPU targets that reproduce, with the
// oracle, a real kernel's habit of choosing its schedule by a property of
// the batch. Where the real kernel's choice changes only the order of fp32
// reductions, so does the model's, and the output is rounded the same way:
// the drift shows in an output bit only where an fp32 value sits next to a
// rounding boundary (the hard case), and always in the fp32 taps.
// Every model must be found by the relations listed in its Info.Expect.

// SMs is the number of streaming multiprocessors of an H200, which decode
// split heuristics aim to fill.
const SMs = 132

var (
	// rmsWide is an 8-wide, 64-thread reduction (the vectorised path).
	rmsWide = oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 64, Vec: 8,
		Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}, Order: oracle.ScaleThenWeight}
	// rmsBlock1024 and rmsBlock256 are vLLM's two block sizes, 1 element
	// per load.
	rmsBlock1024 = oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 1024, Vec: 1,
		Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}, Order: oracle.ScaleThenWeight}
	rmsBlock256 = oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 256, Vec: 1,
		Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}, Order: oracle.ScaleThenWeight}
)

// TERMSNormMod32 models TransformerEngine's RMSNorm, which picks its
// launch configuration (the tuned, vectorised kernel or the general one) by
// whether the row count M is a multiple of 32 (docs/architecture.md,
// "Facts behind the drift models"):
//
//	rows % 32 == 0: threads=64 vec=8  (rmsWide)
//	otherwise:      threads=32 vec=4  (OracleRMSNormSchedule, declared)
//
// Only the fp32 sum of squares changes order; the output is rounded alike.
func TERMSNormMod32(b *Batch) oracle.Schedule {
	if b.Rows()%32 == 0 {
		return rmsWide
	}
	return OracleRMSNormSchedule
}

// VLLMRMSNorm256 models vLLM's rms_norm kernel, whose block size was
// min(hidden, 1024) threads below 256 tokens and 256 threads from 256 tokens
// on (`max_block_size = num_tokens < 256 ? 1024 : 256`; docs/architecture.md:
// vLLM's RMSNorm switches on 256 tokens):
//
//	rows < 256:  threads=1024 vec=1 (declared)
//	rows >= 256: threads=256  vec=1
func VLLMRMSNorm256(b *Batch) oracle.Schedule {
	if b.Rows() >= 256 {
		return rmsBlock256
	}
	return rmsBlock1024
}

// GEMMSplitKByM models cuBLAS's heuristic choosing split-K by M: small M
// leaves SMs idle, so K is split and the partials summed; at larger M the
// tiles alone fill the GPU (docs/architecture.md: a prefix-cache hit changes a
// GEMM's M and with it the kernel):
//
//	M <= 64: split-K 4, partials combined in order
//	M > 64:  split-K 1 (declared)
func GEMMSplitKByM(b *Batch) oracle.Schedule {
	if b.Input.(*oracle.GEMMInput).M <= 64 {
		return oracle.GEMMSchedule{SplitK: 4, Combine: oracle.CrossSequential}
	}
	return OracleGEMMSchedule
}

// DecodeSplitsByBatch models FlashAttention/FlashDecoding's num_splits
// heuristic: the KV range is split when batch x heads blocks leave the SMs
// idle, and not once they fill them, so a request's bits depend on how many
// other requests share its batch (docs/architecture.md: num_splits chosen by
// batch size; a decode padded to a CUDA-graph size changes it):
//
//	requests·heads <  132 (the H200's SMs): 4 splits, tile 64
//	requests·heads >= 132:                  1 split,  tile 64 (declared)
//
// Splits are tile-aligned, so a KV cache of 64 tokens or fewer is one split
// either way.
func DecodeSplitsByBatch(b *Batch) oracle.Schedule {
	if d := b.Input.(*oracle.DecodeInput); len(d.K)*d.Heads >= SMs {
		return OracleAttentionSchedule
	}
	return oracle.AttentionSchedule{Tile: 64, Splits: 4}
}

// Tile48 is the KV tile of the FlashAttention generation that
// drift-attn-tile48 models.
var Tile48 = oracle.AttentionSchedule{Tile: 48, Splits: 1}

// LogProbBlockRows is the row count from which drift-order-logprob-rows132
// gives each row one warp instead of a 1024-thread block.
const LogProbBlockRows = SMs

// logprobBlock is a 1024-thread block per row, 4-wide loads.
var logprobBlock = oracle.LogProbSchedule{Reduce: oracle.Reduction{Threads: 1024, Vec: 4,
	Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}}

// LogProbRows132 is the policy of drift-order-logprob-rows132, a
// log-softmax kernel whose launch gives each row a whole 1024-thread block
// while the rows do not fill the GPU's 132 SMs and one warp per row once
// they do (the shape-chosen block size of softmax kernels, here keyed on
// the row count, which is what makes it batch-dependent):
//
//	rows <  132: threads=1024 vec=4 (the max and the sum of exponentials)
//	rows >= 132: threads=32   vec=4 (OracleLogProbSchedule, declared)
//
// Only the order of the fp32 max and sum reductions changes (max is
// exact, so only the sum's rounding moves); log-probs stay fp32 and are
// compared in the case's compare dtype (bf16 in the detection table).
func LogProbRows132(b *Batch) oracle.LogProbSchedule {
	if b.Rows() >= LogProbBlockRows {
		return OracleLogProbSchedule
	}
	return logprobBlock
}

// driftModels are the CPU drift models every build has.
func driftModels() []Target {
	var ts []Target
	drift := func(name string, op spec.Op, declared oracle.Schedule, models string, expect []string, policy func(*Batch) oracle.Schedule, post func(*Batch, *Output)) {
		ts = append(ts, &scheduled{
			info: Info{Name: name, Op: op, Device: "cpu", Schedule: declared.String(),
				Models: models, Expect: expect},
			policy: policy,
			post:   post,
		})
	}
	batchRels := []string{spec.RelBatchInvariance, spec.RelPadding, spec.RelOracleParity}
	drift("drift-rmsnorm-te-mod32", rmsnorm.Op{}.Name(), OracleRMSNormSchedule,
		"TransformerEngine RMSNorm: reduction path chosen by rows % 32 (threads=64 vec=8 when rows % 32 == 0, else threads=32 vec=4)",
		batchRels, TERMSNormMod32, nil)
	drift("drift-rmsnorm-vllm-256", rmsnorm.Op{}.Name(), rmsBlock1024,
		"vLLM rms_norm: 1024-thread blocks below 256 tokens, 256-thread blocks from 256 tokens on",
		batchRels, VLLMRMSNorm256, nil)
	drift("drift-gemm-splitk-by-m", gemm.Op{}.Name(), OracleGEMMSchedule,
		"cuBLAS split-K chosen by M: split-K 4 for M <= 64, none above",
		batchRels, GEMMSplitKByM, nil)
	drift("drift-decode-splits-by-batch", attention.Decode{}.Name(), OracleAttentionSchedule,
		"FlashDecoding num_splits chosen by batch size: 4 KV splits while requests x heads < 132 SMs, 1 from 132 on",
		batchRels, DecodeSplitsByBatch, nil)
	drift("drift-attn-tile48", attention.Prefill{}.Name(), Tile48,
		"a FlashAttention generation with KV tile 48 against one with tile 64 (the oracle): identical up to 48 KV tokens, different from 49 (online-softmax rescale at another place)",
		[]string{spec.RelPathParity}, func(*Batch) oracle.Schedule { return Tile48 }, nil)
	drift("drift-logprob-train-bf16", logprob.Op{}.Name(), OracleLogProbSchedule,
		"a training path that produces log-probs in its bf16 training dtype; comparing it with the fp32 inference path in fp32 is a misuse (rounding noise)",
		[]string{spec.RelLogProbParity}, func(*Batch) oracle.Schedule { return OracleLogProbSchedule },
		func(_ *Batch, o *Output) {
			oracle.RoundSlice(oracle.BF16, o.Values)
			o.DType = oracle.BF16
		})
	drift("drift-logprob-zerofill", logprob.Op{}.Name(), OracleLogProbSchedule,
		"an inference engine that reports log-probs only for generated positions (the second half of the rows) and zero-fills the prompt positions it never computed; comparing those is a misuse",
		[]string{spec.RelLogProbParity}, func(*Batch) oracle.Schedule { return OracleLogProbSchedule },
		zeroFillPrompt)
	return ts
}

// zeroFillPrompt zero-fills the selected rows below Rows/2 (the prompt) and
// lists them in Filled.
func zeroFillPrompt(b *Batch, o *Output) {
	prompt := b.Rows() / 2
	for i, r := range o.Rows {
		if r < prompt {
			o.Values[i] = 0
			o.Filled = append(o.Filled, i)
		}
	}
}
