//go:build cuda

package scan

import (
	"errors"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/ops/gemm"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The GPU gemm targets (cuda-gemm, the gemm drift models, the cuBLAS
// targets: gpu.HoldGEMM) and log-prob targets (gpu.HoldLogProb) hold a
// draw's batch on the device as well: X and W (the logits and targets)
// are uploaded once, every step launches on a prefix or a gather of the
// resident rows, and the compares run there. A gemm case of generator
// version 2 makes X and W on the device instead (holdGEMMCase): nothing of
// the draw is generated or uploaded from the host.
func init() {
	holders = append(holders,
		func(t target.Target, b *target.Batch) (held, error) { return deviceHold(gpu.HoldGEMM(t, b)) },
		func(t target.Target, b *target.Batch) (held, error) { return deviceHold(gpu.HoldLogProb(t, b)) })
	caseHolders = append(caseHolders, holdGEMMCase)
}

// holdGEMMCase holds the largest batch of gemm case c for a GPU gemm or
// cuBLAS target with X and W made on the device (inputs.GEMMTensors,
// gpu.HoldGEMMCase). The batch it returns has the sizes and no values (a
// gemm has one row an item; nothing else of it is read). A case or target
// it does not serve (another op, generator version 1, explicit data, the
// sensitive draws, cublas-sgemm's widened inputs) is left to the host:
// nil, nil, nil.
func holdGEMMCase(t target.Target, c spec.Case, _ *target.Batch) (held, *target.Batch, error) {
	if c.Op != (gemm.Op{}).Name() {
		return nil, nil, nil
	}
	x, w, err := inputs.GEMMTensors(c)
	if errors.Is(err, target.ErrUnsupported) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	h, err := deviceHold(gpu.HoldGEMMCase(t, c, x, w))
	if err != nil || h == nil {
		return nil, nil, err
	}
	out, err := oracle.ParseDType(string(c.Out))
	if err != nil {
		h.release()
		return nil, nil, err
	}
	s := c.Shape
	return h, &target.Batch{Op: gemm.Op{}.Name(), In: x.DType, Out: out, Input: &oracle.GEMMInput{M: s.Rows, K: s.Hidden, N: s.N, Out: out}}, nil
}
