package oracle

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// cublasShape is one GEMM the probe runs through cublasGemmEx (bf16 A and
// B, fp32 compute, fp32 and bf16 C), y = x·W with x M x K and W K x N.
type cublasShape struct{ M, K, N int }

func (s cublasShape) name() string { return fmt.Sprintf("gemm_%d_%d_%d", s.M, s.K, s.N) }

// cublasShapes cover the M classes the H200 showed (docs/findings.md:
// 1, 2-16, 17+) and the split-K range of small M at long K.
var cublasShapes = func() []cublasShape {
	var s []cublasShape
	for _, k := range []int{128, 4096} {
		for _, m := range []int{1, 2, 4, 8, 16, 17, 32, 64, 65, 128, 256, 1024} {
			s = append(s, cublasShape{m, k, 256})
		}
	}
	return s
}()

// cublasInputs draws x and W of s: bf16 normal values, seeded by the shape.
func cublasInputs(s cublasShape) (x, w []float32) {
	r := rand.New(rand.NewPCG(uint64(s.M)<<32|uint64(s.K), uint64(s.N)))
	return randVals(r, BF16, s.M*s.K, 1), randVals(r, BF16, s.K*s.N, 1)
}

func bf16Bytes(xs []float32) []byte {
	b := make([]byte, 0, 2*len(xs))
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint16(b, BF16FromF32(x))
	}
	return b
}
