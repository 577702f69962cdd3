//go:build cuda

package scan

import (
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/target"
)

// The GPU gemm targets (cuda-gemm, the gemm drift models, the cuBLAS
// targets: gpu.HoldGEMM) and log-prob targets (gpu.HoldLogProb) hold a
// draw's batch on the device as well: X and W (the logits and targets)
// are uploaded once, every step launches on a prefix or a gather of the
// resident rows, and the compares run there.
func init() {
	holders = append(holders,
		func(t target.Target, b *target.Batch) (held, error) { return deviceHold(gpu.HoldGEMM(t, b)) },
		func(t target.Target, b *target.Batch) (held, error) { return deviceHold(gpu.HoldLogProb(t, b)) })
}
