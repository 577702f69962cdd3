// compare.cu: the device-side row compare. Only per-row summaries of the
// differing rows leave the device.
#include "common.cuh"
#include "digest.cuh"
#include "steps.cuh"

#define UNROLL 4

__device__ __forceinline__ bool is_nan_bits(unsigned x, int dt)
{
	if (dt == DT_FP32)
		return (x & 0x7fffffffu) > 0x7f800000u;
	if (dt == DT_BF16)
		return (x & 0x7fffu) > 0x7f80u;
	return (x & 0x7fffu) > 0x7c00u;
}

// ulp_dist is oracle.ULPDistanceBits(dt, a, b).ULPs: 0 for equal bits,
// MaxUint64 when either is NaN and the bits differ, else |ord(a) - ord(b)|
// on the sign-magnitude ordering (+0 and -0 are 0 apart).
__device__ __forceinline__ u64 ulp_dist(unsigned a, unsigned b, int dt)
{
	if (a == b)
		return 0;
	if (is_nan_bits(a, dt) || is_nan_bits(b, dt))
		return ~0ull;
	unsigned sign = dt == DT_FP32 ? 0x80000000u : 0x8000u;
	i64 oa = (i64)(a & ~sign), ob = (i64)(b & ~sign);
	if (a & sign)
		oa = -oa;
	if (b & sign)
		ob = -ob;
	i64 d = oa - ob;
	return (u64)(d < 0 ? -d : d);
}

// elem_bits returns element j of a row stored as dtype sdt, as the bits of
// dtype cdt (rounded when the dtypes differ).
__device__ __forceinline__ unsigned elem_bits(const void *row, i64 j, int sdt, int cdt)
{
	if (sdt == cdt) {
		if (sdt == DT_FP32)
			return ((const unsigned *)row)[j];
		return ((const unsigned short *)row)[j];
	}
	return to_bits(load(row, j, sdt), cdt);
}

struct Acc {
	unsigned count;
	i64 first;
	u64 ulps;
	__device__ __forceinline__ void add(unsigned a, unsigned b, i64 col, int dt)
	{
		if (a != b) {
			count++;
			if (col < first)
				first = col;
			u64 u = ulp_dist(a, b, dt);
			if (u > ulps)
				ulps = u;
		}
	}
};

// compare_rows (blockDim.x a multiple of 32) compares, for pair p (blocks stride over pairs), row pa[p]
// of a with row pb[p] of b (cols values each; a stored as a_dt, b as b_dt)
// in dtype cmp_dt. A differing pair gets one slot s = atomicAdd(&ndiff[0], 1)
// with out_pair[s] = p, out_count[s] = differing columns, out_first[s] =
// first differing column, out_ulps[s] = largest ulp distance in cmp_dt.
//
// ndiff[0] counts the differing pairs and ndiff[1] the finished blocks;
// both must be zero at launch. The last block to finish (after a
// __threadfence, so every other block's atomics are visible) stores the
// count at *host_ndiff, page-locked host memory mapped into the device
// (skipped when host_ndiff is null), and zeroes ndiff[0] and ndiff[1]
// again, so the next compare into the same buffer needs no memset and the
// host no copy: only the kernel and an event sit on the stream.
extern "C" __global__ void compare_rows(const void *a, const void *b, const i64 *pa, const i64 *pb, i64 npairs,
					i64 cols, i64 a_dt, i64 b_dt, i64 cmp_dt, unsigned *ndiff, i64 *out_pair,
					i64 *out_count, i64 *out_first, u64 *out_ulps, unsigned *host_ndiff)
{
	__shared__ unsigned s_count[32];
	__shared__ i64 s_first[32];
	__shared__ u64 s_ulps[32];
	const int t = threadIdx.x;
	const int adt = (int)a_dt, bdt = (int)b_dt, cdt = (int)cmp_dt;
	const int asz = adt == DT_FP32 ? 4 : 2, bsz = bdt == DT_FP32 ? 4 : 2;
	const bool fast = adt == cdt && bdt == cdt && ((cols * asz) % 16) == 0;
	for (i64 p = blockIdx.x; p < npairs; p += gridDim.x) {
		const char *ra = (const char *)a + (size_t)(pa[p] * cols) * asz;
		const char *rb = (const char *)b + (size_t)(pb[p] * cols) * bsz;
		Acc acc = {0u, 0x7fffffffffffffffll, 0ull};
		if (fast) {
			// 16-byte loads, UNROLL of them per thread in flight before
			// the first compare.
			const uint4 *__restrict__ va = (const uint4 *)ra, *__restrict__ vb = (const uint4 *)rb;
			const i64 nv = cols * asz / 16;
			const int per = 16 / asz;
			for (i64 u0 = t; u0 < nv; u0 += UNROLL * (i64)blockDim.x) {
				uint4 x[UNROLL], y[UNROLL];
#pragma unroll
				for (int k = 0; k < UNROLL; k++) {
					i64 u = u0 + (i64)k * blockDim.x;
					if (u < nv) {
						x[k] = __ldcs(va + u);
						y[k] = __ldcs(vb + u);
					} else {
						x[k] = make_uint4(0, 0, 0, 0);
						y[k] = x[k];
					}
				}
#pragma unroll
				for (int k = 0; k < UNROLL; k++) {
					if (x[k].x == y[k].x && x[k].y == y[k].y && x[k].z == y[k].z && x[k].w == y[k].w)
						continue;
					i64 u = u0 + (i64)k * blockDim.x;
					unsigned xs[4] = {x[k].x, x[k].y, x[k].z, x[k].w}, ys[4] = {y[k].x, y[k].y, y[k].z, y[k].w};
					for (int q = 0; q < 4; q++) {
						if (xs[q] == ys[q])
							continue;
						if (asz == 4) {
							acc.add(xs[q], ys[q], u * per + q, cdt);
						} else {
							acc.add(xs[q] & 0xffffu, ys[q] & 0xffffu, u * per + 2 * q, cdt);
							acc.add(xs[q] >> 16, ys[q] >> 16, u * per + 2 * q + 1, cdt);
						}
					}
				}
			}
		} else {
			for (i64 j = t; j < cols; j += blockDim.x)
				acc.add(elem_bits(ra, j, adt, cdt), elem_bits(rb, j, bdt, cdt), j, cdt);
		}
		// block reduce: sum of counts, min of first, max of ulps
		for (int off = 16; off >= 1; off /= 2) {
			acc.count += __shfl_xor_sync(0xffffffffu, acc.count, off);
			i64 f = __shfl_xor_sync(0xffffffffu, acc.first, off);
			if (f < acc.first)
				acc.first = f;
			u64 m = __shfl_xor_sync(0xffffffffu, acc.ulps, off);
			if (m > acc.ulps)
				acc.ulps = m;
		}
		const int warps = blockDim.x / 32;
		if ((t & 31) == 0) {
			s_count[t / 32] = acc.count;
			s_first[t / 32] = acc.first;
			s_ulps[t / 32] = acc.ulps;
		}
		__syncthreads();
		if (t == 0) {
			for (int w = 1; w < warps; w++) {
				acc.count += s_count[w];
				if (s_first[w] < acc.first)
					acc.first = s_first[w];
				if (s_ulps[w] > acc.ulps)
					acc.ulps = s_ulps[w];
			}
			if (acc.count > 0) {
				unsigned s = atomicAdd(ndiff, 1u);
				out_pair[s] = p;
				out_count[s] = acc.count;
				out_first[s] = acc.first;
				out_ulps[s] = acc.ulps;
			}
		}
		__syncthreads();
	}
	if (t == 0) {
		__threadfence();
		if (atomicAdd(&ndiff[1], 1u) == gridDim.x - 1) {
			__threadfence();
			const unsigned count = atomicExch(&ndiff[0], 0u);
			atomicExch(&ndiff[1], 0u);
			if (host_ndiff)
				*(volatile unsigned *)host_ndiff = count;
		}
	}
}

// block_sum2 adds a and b over the block (blockDim.x a multiple of 32, at
// most 1024); the sums are valid in thread 0. sa and sb are 32 shared
// words each, free again when it returns.
__device__ __forceinline__ void block_sum2(u64 &a, u64 &b, u64 *sa, u64 *sb)
{
	for (int off = 16; off >= 1; off /= 2) {
		a += __shfl_xor_sync(0xffffffffu, a, off);
		b += __shfl_xor_sync(0xffffffffu, b, off);
	}
	const int t = threadIdx.x;
	if ((t & 31) == 0) {
		sa[t / 32] = a;
		sb[t / 32] = b;
	}
	__syncthreads();
	if (t == 0) {
		for (int w = 1; w < (int)(blockDim.x / 32); w++) {
			a += sa[w];
			b += sb[w];
		}
	}
	__syncthreads();
}

// digest_rows writes the digest (digest.cuh: external.RowDigest) of row r of rows (nrows rows of cols
// words of dtype dt, row-major) to out[r]; blocks stride over the rows.
extern "C" __global__ void digest_rows(const void *rows, i64 nrows, i64 cols, i64 dt, u64 *out)
{
	__shared__ u64 sa[32], sb[32];
	const int ws = dt == DT_FP32 ? 4 : 2;
	const int vec = ((cols * ws) % 16) == 0;
	const DigestPowers pw = dg_powers(ws, threadIdx.x, blockDim.x);
	for (i64 r = blockIdx.x; r < nrows; r += gridDim.x) {
		u64 d = dg_part((const char *)rows + (size_t)(r * cols) * ws, cols, ws, vec, threadIdx.x, blockDim.x, &pw), none = 0;
		block_sum2(d, none, sa, sb);
		if (threadIdx.x == 0)
			out[r] = d;
	}
}

// check_steps is one step of a scan's bulk check (steps.cuh says what it
// does with each row and with the step's record): the batch's output
// (vals: nrows rows of cols words of dtype dt; taps: tap_cols fp32 words a
// row, none when tap_cols is 0) against the digests of the same rows alone
// and, when ref is not null, in the reference batch. Blocks stride over
// the rows, each row digested once (digest.cuh) and checked by thread 0
// (st_row); each block adds its count to counters[0] and its sum to
// counters[2] once. counters[1] counts the finished blocks; all three,
// and bits, must be zero at launch. The last block to finish (after a
// __threadfence) writes the step's record to record, page-locked host
// memory mapped into the device (st_record), and leaves the counters and
// bits zero again, as compare_rows does: consecutive steps share them with
// no memset between them, and the host reads each step's record with no
// copy.
extern "C" __global__ void check_steps(const void *vals, const void *taps, i64 nrows, i64 cols, i64 dt, i64 tap_cols,
				       i64 cmp_taps, const u64 *alone, const u64 *alone_taps, const u64 *ref, const u64 *ref_taps,
				       i64 panel_rows, i64 words, u64 *panel, unsigned *bits, u64 *counters, char *record)
{
	__shared__ u64 sa[32], sb[32];
	__shared__ int last;
	__shared__ u64 count, sum;
	const StepCheck c = {alone, alone_taps, ref, ref_taps, panel_rows, words, panel, bits, (int)cmp_taps};
	const int ws = dt == DT_FP32 ? 4 : 2;
	const int vec = ((cols * ws) % 16) == 0;
	const DigestPowers pw = dg_powers(ws, threadIdx.x, blockDim.x);
	u64 differ = 0, mine = 0;
	for (i64 r = blockIdx.x; r < nrows; r += gridDim.x) {
		StepSides sides = {0, 0, 0, 0};
		if (threadIdx.x == 0)
			sides = st_sides(&c, r);
		u64 d = dg_part((const char *)vals + (size_t)(r * cols) * ws, cols, ws, vec, threadIdx.x, blockDim.x, &pw);
		u64 t = 0;
		if (tap_cols > 0)
			t = dg_part((const char *)taps + (size_t)(r * tap_cols) * 4, tap_cols, 4, 0, threadIdx.x, blockDim.x, &pw);
		block_sum2(d, t, sa, sb);
		if (threadIdx.x == 0)
			differ += st_row(&c, r, d, t, sides, &mine);
	}
	if (threadIdx.x == 0) {
		if (differ > 0)
			atomicAdd(&counters[0], differ);
		atomicAdd(&counters[2], mine);
		__threadfence();
		last = atomicAdd(&counters[1], 1ull) == gridDim.x - 1;
		if (last) {
			__threadfence();
			count = atomicExch(&counters[0], 0ull);
			sum = atomicExch(&counters[2], 0ull);
			atomicExch(&counters[1], 0ull);
		}
	}
	__syncthreads();
	if (last)
		st_record(&c, nrows, count, sum, record, threadIdx.x, blockDim.x);
}
