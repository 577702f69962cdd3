//go:build cuda

package gpu

import (
	"math"
	"testing"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/quantfp8"
	"github.com/bitparity/bitparity/oracle"
)

// TestQuantFP8Kernel: our quant_fp8 kernels give the oracle's rows bit for
// bit for every policy (per token and per tensor, e4m3 and e5m2), every
// draw (normal, outlier, heavy), fp32 and bf16 inputs and several widths,
// and on explicit rows of zeros, NaNs, infinities, signed zeros, values at
// and past the formats' largest and smallest, and fp32 subnormals.
func TestQuantFP8Kernel(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	op := quantfp8.Op{}
	keys := make([]uint64, 200)
	for i := range keys {
		keys[i] = uint64(i)
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	explicit := []float32{
		0, 0, 0, 0, 0, 0, // scale 1
		1, -1, 448, 464, 480, -57344,
		nan, 3, -inf, 2, float32(math.Copysign(0, -1)), 0.001,
		inf, 1, 2, 3, 4, 5,
		math.Float32frombits(1), math.Float32frombits(0x00400000), -math.Float32frombits(3), 0, 0, 0, // fp32 subnormals only
		1e-3, 2e-3, 0.0625, 0.0078125, 0.001953125, 1,
	}
	for _, cpu := range op.Targets() {
		tg := lookupMoE(t, "cuda-"+cpu.Name())
		for _, h := range []int{1, 7, 256, 2048} {
			for _, dt := range []oracle.DType{oracle.FP32, oracle.BF16} {
				for _, dist := range op.Record().Dists {
					s := ops.Shape{quantfp8.DimHidden: h}
					in, err := op.Seeded(ops.Draw{Shape: s, DType: dt, Dist: dist, Seed: 11}, keys)
					if err != nil {
						t.Fatal(err)
					}
					sameAsOracle(t, tg, in, cpu.Declared(), s.String()+" "+dt.String()+" "+dist)
				}
			}
		}
		in, err := op.Explicit(ops.Shape{quantfp8.DimHidden: 6}, oracle.FP32, explicit)
		if err != nil {
			t.Fatal(err)
		}
		sameAsOracle(t, tg, in, cpu.Declared(), "explicit rows")
		one, _ := in.Gather([]int{0})
		sameAsOracle(t, tg, one, cpu.Declared(), "a row of zeros alone")
	}
}
