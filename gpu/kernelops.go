package gpu

import (
	"strings"

	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/ops/gemm"
	"github.com/bitparity/bitparity/ops/logprob"
	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// kernelOp is what the kernel ABI (docs/kernel-abi.md) asks of a user
// kernel of one op, and how a batch of that op is handed to it: the
// parameter names the ABI knows (device pointers to inputs, the output
// pointer y, optional fp32 tap outputs such as attention's lse, the shape
// sizes passed as 64-bit integers, and the scalars: eps and scale as
// fp32, causal as 1, the dtype codes in_dtype and out_dtype as 0 fp32,
// 1 bf16, 2 fp16).
type kernelOp struct {
	Inputs, Taps, Sizes, Scalars []string
	// Layout is the size through which a kernel reads the batch's
	// target.Layout: attn_prefill's q_start (Layout.ChunkFrom),
	// attn_decode's page_size (Layout.PageSize, DecodePageSize when 0).
	// A manifest declaring "layout": true must take it. Empty: the op
	// has no layout.
	Layout string
	// OutFP32: the output is fp32 whatever the manifest says (logprob).
	OutFP32 bool
	// OneSplit: a schedule declared for the op has splits=1 (a prefill
	// row is one split).
	OneSplit bool
	// Attention: the op's kernel is given the size "sms" (the device's
	// multiprocessors), and a held batch's steps are made as attnStep
	// says (per-item slabs, a shared cache, int32 tensors per step).
	Attention bool
	// DeviceRows: a held lazy batch of the op whose rows the device makes
	// (generates) has only its weights uploaded, its rows made there by
	// the case's generator (rmsnorm).
	DeviceRows bool
	// Samples are the shapes LoadManifest checks the geometry on: the
	// smallest and a large one.
	Samples []map[string]int64
	// args names batch b's inputs, sizes and scalars in u as the ABI
	// does (KernelInputs).
	args func(b *target.Batch, u *KernelArgs) error
}

// kernelOps are the ops a user kernel may implement, keyed by their op
// package's name (ops/all). Attention's large samples are llama3-8b's
// heads at a head dim of 256: 1024 decode requests of up to 128Ki tokens
// in pages of DecodePageSize, or 64 prefill sequences of 8192 tokens.
var kernelOps = map[spec.Op]kernelOp{
	rmsnorm.Op{}.Name(): {
		Inputs: []string{"x", "w"}, Sizes: []string{"rows", "hidden"}, Scalars: []string{"eps", "in_dtype", "out_dtype"},
		DeviceRows: true,
		Samples:    []map[string]int64{{"rows": 1, "hidden": 1}, {"rows": 8192, "hidden": 16384}},
		args:       rmsnormArgs,
	},
	gemm.Op{}.Name(): {
		Inputs: []string{"x", "w"}, Sizes: []string{"m", "k", "n"}, Scalars: []string{"in_dtype", "out_dtype"},
		Samples: []map[string]int64{{"m": 1, "k": 1, "n": 1}, {"m": 8192, "k": 16384, "n": 16384}},
		args:    gemmArgs,
	},
	logprob.Op{}.Name(): {
		Inputs: []string{"logits", "targets"}, Sizes: []string{"rows", "vocab"}, Scalars: []string{"in_dtype"},
		OutFP32: true,
		Samples: []map[string]int64{{"rows": 1, "vocab": 1}, {"rows": 8192, "vocab": 262144}},
		args:    logprobArgs,
	},
	attention.Prefill{}.Name(): {
		Inputs: []string{"q", "k", "v", "cu_seqlens"}, Taps: []string{"lse"},
		Sizes:   []string{"seqs", "tokens", "max_seqlen", "q_start", "heads", "kv_heads", "head_dim", "sms"},
		Scalars: []string{"scale", "causal", "in_dtype", "out_dtype"},
		Layout:  "q_start", OneSplit: true, Attention: true,
		Samples: []map[string]int64{
			{"seqs": 1, "tokens": 1, "max_seqlen": 1, "q_start": 0, "heads": 1, "kv_heads": 1, "head_dim": 1, "sms": 1},
			{"seqs": 64, "tokens": 64 * 8192, "max_seqlen": 8192, "q_start": 4096, "heads": 32, "kv_heads": 8, "head_dim": 256, "sms": 132}},
		args: prefillArgs,
	},
	attention.Decode{}.Name(): {
		Inputs: []string{"q", "k_cache", "v_cache", "block_table", "kv_lens"}, Taps: []string{"lse"},
		Sizes:   []string{"requests", "heads", "kv_heads", "head_dim", "page_size", "max_pages", "pages", "max_kv", "sms"},
		Scalars: []string{"scale", "in_dtype", "out_dtype"},
		Layout:  "page_size", Attention: true,
		Samples: []map[string]int64{
			{"requests": 1, "heads": 1, "kv_heads": 1, "head_dim": 1, "page_size": DecodePageSize, "max_pages": 1, "pages": 1, "max_kv": 1, "sms": 1},
			{"requests": 1024, "heads": 32, "kv_heads": 8, "head_dim": 256, "page_size": DecodePageSize,
				"max_pages": 131072 / DecodePageSize, "pages": 1024 * 131072 / DecodePageSize, "max_kv": 131072, "sms": 132}},
		args: decodeArgs,
	},
}

// kernelOpNames lists the ops a user kernel may implement, in spec.Ops
// order.
func kernelOpNames() string {
	var ns []string
	for _, op := range spec.Ops {
		if _, ok := kernelOps[op]; ok {
			ns = append(ns, string(op))
		}
	}
	return strings.Join(ns, ", ")
}
