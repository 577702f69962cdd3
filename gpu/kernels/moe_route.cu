// moe_route.cu: ops/moeroute's Route with the sequential sum, either
// tie-break (moeroute.Policy{Tie: any, Sum: SumSequential}).
#include "common.cuh"
#include "explog.cuh"

// ranks_before is moeroute's before: expert a (probability qa) ranks
// before expert b (qb) when qa is larger; a NaN ranks below every number;
// equal probabilities (or two NaNs) rank by index, the lowest first
// (tie_high = 0) or the highest (tie_high = 1). It is a strict total order.
__device__ __forceinline__ bool ranks_before(float qa, int a, float qb, int b, int tie_high)
{
	const bool na = qa != qa, nb = qb != qb;
	if (na && !nb)
		return false;
	if (nb && !na)
		return true;
	if (!na && qa != qb)
		return qa > qb;
	return tie_high ? a > b : a < b;
}

// moe_route routes token r (one thread per token; a row of E logits of
// dtype in_dt) exactly as oracle loop moeroute.Route does:
//
//	m    = omax(... omax(x[0], x[1]) ..., x[E-1])         oracle.Max32
//	S    = ((p[0] + p[1]) + p[2]) + ... + p[E-1]           add.rn in order,
//	       p[e] = exp32(x[e] - m)                          oracle.Exp32, sub.rn
//	q[e] = p[e] / S                                        div.rn
//	id[j] = the expert ranked first (ranks_before) among those ranked
//	        after id[j-1]: the top k in rank order, as Route's "largest q
//	        not chosen yet", without a chosen set (q[e] is recomputed, the
//	        same bits every time)
//	W    = ((q[id[0]] + q[id[1]]) + ...) + q[id[k-1]]      add.rn in order
//	w[j] = q[id[j]] / W                                    div.rn
//
// ids and weights are K int32 and K fp32 per token.
extern "C" __global__ void moe_route(const void *logits, int *ids, float *weights, i64 rows, i64 E, i64 K, i64 in_dt,
				     i64 tie_high)
{
	const i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	const int idt = (int)in_dt;
	const int th = (int)tie_high;
	const void *x = (const char *)logits + (size_t)(r * E) * (idt == DT_FP32 ? 4 : 2);
	float m = load(x, 0, idt);
	for (i64 e = 1; e < E; e++)
		m = omax(m, load(x, e, idt));
	float s = exp32(__fsub_rn(load(x, 0, idt), m));
	for (i64 e = 1; e < E; e++)
		s = __fadd_rn(s, exp32(__fsub_rn(load(x, e, idt), m)));
	int *id = ids + r * K;
	float *w = weights + r * K;
	int prev = -1;
	float qprev = 0.0f;
	for (i64 j = 0; j < K; j++) {
		int best = -1;
		float qbest = 0.0f;
		for (int e = 0; e < (int)E; e++) {
			const float q = __fdiv_rn(exp32(__fsub_rn(load(x, e, idt), m)), s);
			if (prev >= 0 && !ranks_before(qprev, prev, q, e, th))
				continue;
			if (best < 0 || ranks_before(q, e, qbest, best, th)) {
				best = e;
				qbest = q;
			}
		}
		id[j] = best;
		w[j] = qbest;
		prev = best;
		qprev = qbest;
	}
	float total = w[0];
	for (i64 j = 1; j < K; j++)
		total = __fadd_rn(total, w[j]);
	for (i64 j = 0; j < K; j++)
		w[j] = __fdiv_rn(w[j], total);
}
