package oracle

import "testing"

// BenchmarkTensorCoreDotAdd is one H200 tensor-core step (16 bf16 products
// and the accumulator) in the model; TestTensorCoreH200 runs 5·2^20 of them.
func BenchmarkTensorCoreDotAdd(b *testing.B) {
	r := newRNG(30)
	x, w := randVals(r, BF16, 16, 1), randVals(r, BF16, 16, 1)
	tc := TensorCoreH200(MMABF16)
	acc := float32(0)
	for b.Loop() {
		acc = tc.DotAdd(x, w, acc)
	}
	_ = acc
}

// BenchmarkGEMMRowTensorCore is one GEMM row (K = N = 1024) chaining the
// bf16 tensor-core step, as cuBLAS at split-K 1.
func BenchmarkGEMMRowTensorCore(b *testing.B) {
	r := newRNG(31)
	in := gemmInput(r, BF16, FP32, 1, 1024, 1024)
	s := GEMMSchedule{SplitK: 1, MMA: MMABF16}
	for b.Loop() {
		if _, err := GEMM(in, s, []int{0}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2*1024*1024)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
