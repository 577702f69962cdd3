// logprob.cu: oracle.LogProb with any oracle.LogProbSchedule.
#include "common.cuh"
#include "explog.cuh"
#include "reduce.cuh"

struct ExpSumTerm {
	float m;
	__device__ __forceinline__ float operator()(float acc, float x) const { return __fadd_rn(acc, exp32(__fsub_rn(x, m))); }
};

// logprob computes the fp32 log-prob of selected row i (one block per row,
// blockDim.x = Reduce.Threads; batch row r = rowsel ? rowsel[i] : i):
//
//	m   = reduce(x, init -Inf, term max, combine max)          oracle.Max32
//	sum = reduce(x, init +0, term acc + Exp32(x - m), combine add.rn)
//	out[i] = (x[target] - m) - Log32(sum)                        sub.rn twice
//
// with the per-thread loop of oracle.Reduction. taps gets m and sum.
extern "C" __global__ void logprob(const void *logits, const int *targets, float *out, float *taps, const i64 *rowsel,
				   i64 V, i64 in_dt, i64 vec, i64 warp_order, i64 cross_order)
{
	__shared__ float sh[REDUCE_SHARED];
	const i64 i = blockIdx.x;
	const i64 r = rowsel ? rowsel[i] : i;
	const int T = blockDim.x;
	const int t = threadIdx.x;
	const int idt = (int)in_dt;
	const void *xr = (const char *)logits + (size_t)(r * V) * (idt == DT_FP32 ? 4 : 2);
	float acc = __uint_as_float(0xff800000u);
	for (i64 base = (i64)t * vec; base < V; base += (i64)T * vec)
		for (int v = 0; v < vec && base + v < V; v++)
			acc = omax(acc, load(xr, base + v, idt));
	float m = block_combine(acc, (int)warp_order, (int)cross_order, MaxOp(), sh);
	ExpSumTerm term{m};
	acc = 0.0f;
	for (i64 base = (i64)t * vec; base < V; base += (i64)T * vec)
		for (int v = 0; v < vec && base + v < V; v++)
			acc = term(acc, load(xr, base + v, idt));
	float sum = block_combine(acc, (int)warp_order, (int)cross_order, AddOp(), sh);
	if (t == 0) {
		float xt = load(xr, targets[r], idt);
		out[i] = __fsub_rn(__fsub_rn(xt, m), log32(sum));
		if (taps) {
			taps[2 * i] = m;
			taps[2 * i + 1] = sum;
		}
	}
}
