//go:build cuda

package gpu

import (
	"fmt"

	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/ops/gemm"
	"github.com/bitparity/bitparity/ops/logprob"
	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// TransformerOps runs the end-to-end transformer's reduction ops
// (transformer.Ops) on a device with bitparity's exact kernels: each call
// uploads its inputs as fp32 (exact for the model's bf16 or fp16 values),
// runs the kernel with the schedule the path's kernel set chose, and
// fetches the selected rows. The command registers it as the transformer
// backend "cuda" (cmd/bitparity/gpu_cuda.go), so a case's targets
// "train:cuda/fixed" and "infer:cuda/fixed+..." run that path on device 0.
// It reads values only, so the attention kernels write no taps.
type TransformerOps struct{ D *Device }

func (t TransformerOps) run(b *target.Batch, s oracle.Schedule, sel []int) ([]float32, error) {
	o, err := t.D.run(b, s, sel, false)
	if err != nil {
		return nil, err
	}
	defer o.Release()
	if err := o.ToHost(); err != nil {
		return nil, fmt.Errorf("gpu %s: %w", b.Op, err)
	}
	return o.Values, nil
}

func (t TransformerOps) RMSNorm(in oracle.RMSNormInput, s oracle.RMSNormSchedule, sel []int) ([]float32, error) {
	return t.run(&target.Batch{Op: rmsnorm.Op{}.Name(), In: oracle.FP32, Out: in.Out, Input: &in}, s, sel)
}

func (t TransformerOps) GEMM(in oracle.GEMMInput, s oracle.GEMMSchedule, sel []int) ([]float32, error) {
	return t.run(&target.Batch{Op: gemm.Op{}.Name(), In: oracle.FP32, Out: in.Out, Input: &in}, s, sel)
}

func (t TransformerOps) LogProb(in oracle.LogProbInput, s oracle.LogProbSchedule, sel []int) ([]float32, error) {
	return t.run(&target.Batch{Op: logprob.Op{}.Name(), In: oracle.FP32, Out: oracle.FP32, Input: &in}, s, sel)
}

func (t TransformerOps) Prefill(in oracle.PrefillInput, s oracle.AttentionSchedule, sel []int) ([]float32, error) {
	return t.run(&target.Batch{Op: attention.Prefill{}.Name(), In: oracle.FP32, Out: in.Out, Input: &in}, s, sel)
}

func (t TransformerOps) Decode(in oracle.DecodeInput, s oracle.AttentionSchedule, sel []int) ([]float32, error) {
	return t.run(&target.Batch{Op: attention.Decode{}.Name(), In: oracle.FP32, Out: in.Out, Input: &in}, s, sel)
}
