package e2e

import (
	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/ops/gemm"
	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// The fuzz engine's drift models (target/drift.go) plugged into a layer:
// each policy there chooses a schedule from a *target.Batch; here it is handed
// a batch of the call's shape (its row count; for decode the padded batch of
// requests and the heads), so the very same policy decides the schedule of
// one site of the transformer. Their names are the engine's target names
// with the prefix "fuzz.". DriftModels lists them after this package's own.
func fuzzDriftModels() []DriftModel {
	rows := func(c Call) *target.Batch {
		return &target.Batch{Op: rmsnorm.Op{}.Name(), Input: &oracle.RMSNormInput{Rows: c.Rows}}
	}
	return []DriftModel{
		DriftModel{
			Name: "fuzz.drift-rmsnorm-te-mod32", Kind: KindRMSNorm, Dim: "rows",
			Models: "target.TERMSNormMod32: TransformerEngine RMSNorm, threads=64 vec=8 when rows % 32 == 0, else threads=32 vec=4",
			Policy: func(c Call, s Schedule) Schedule {
				s.RMSNorm = target.TERMSNormMod32(rows(c)).(oracle.RMSNormSchedule)
				return s
			},
		},
		DriftModel{
			Name: "fuzz.drift-rmsnorm-vllm-256", Kind: KindRMSNorm, Dim: "rows", Needs: Gen{MinTokens: 256, MinHidden: 288},
			Models: "target.VLLMRMSNorm256: vLLM rms_norm, 1024-thread blocks below 256 tokens, 256-thread blocks from 256 on (the two orders agree bitwise while hidden <= 256)",
			Policy: func(c Call, s Schedule) Schedule {
				s.RMSNorm = target.VLLMRMSNorm256(rows(c)).(oracle.RMSNormSchedule)
				return s
			},
		},
		DriftModel{
			Name: "fuzz.drift-gemm-splitk-by-m", Kind: KindGEMM, Dim: "rows",
			Models: "target.GEMMSplitKByM: cuBLAS split-K 4 for M <= 64, none above",
			Policy: func(c Call, s Schedule) Schedule {
				b := &target.Batch{Op: gemm.Op{}.Name(), Input: &oracle.GEMMInput{M: c.Rows}}
				s.GEMM = target.GEMMSplitKByM(b).(oracle.GEMMSchedule)
				return s
			},
		},
		DriftModel{
			Name: "fuzz.drift-decode-splits-by-batch", Kind: KindAttention, Dim: "batch", Needs: Gen{MinSeqLen: 72},
			Models: "target.DecodeSplitsByBatch: FlashDecoding, 4 KV splits of tile 64 while requests x heads < 132 SMs, 1 from 132 on; prefill runs the declared tile-64 schedule",
			Policy: func(c Call, s Schedule) Schedule {
				if c.Phase != Decode {
					s.Attention = target.OracleAttentionSchedule
					return s
				}
				b := &target.Batch{Op: attention.Decode{}.Name(), Input: &oracle.DecodeInput{K: make([][]float32, c.Rows), Heads: c.Heads}}
				s.Attention = target.DecodeSplitsByBatch(b).(oracle.AttentionSchedule)
				return s
			},
		},
	}
}
