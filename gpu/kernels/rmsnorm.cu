// rmsnorm.cu: oracle.RMSNorm with any oracle.RMSNormSchedule.
#include "common.cuh"
#include "reduce.cuh"

// widen is the fp32 value of h, the bits of one element of dtype DT.
template <int DT> __device__ __forceinline__ float widen(unsigned h)
{
	if constexpr (DT == DT_BF16)
		return bf16_to_f32((unsigned short)h);
	else if constexpr (DT == DT_FP16)
		return fp16_to_f32((unsigned short)h);
	else
		return __uint_as_float(h);
}

// load_vec widens elements j..j+N-1 of a tensor of dtype DT into v, read
// in vector loads of up to 16 bytes (j a multiple of N, p aligned to N
// elements). Element k of a 32-bit word of 16-bit elements is its low half
// for even k (little endian).
template <int N, int DT> __device__ __forceinline__ void load_vec(const void *p, i64 j, float *v)
{
	constexpr int SZ = DT == DT_FP32 ? 4 : 2;
	constexpr int BYTES = N * SZ;
	constexpr int WORDS = BYTES >= 4 ? BYTES / 4 : 1;
	const char *a = (const char *)p + j * SZ;
	unsigned w[WORDS];
	if constexpr (BYTES == 2) {
		w[0] = *(const unsigned short *)a;
	} else if constexpr (BYTES == 4) {
		w[0] = *(const unsigned *)a;
	} else if constexpr (BYTES == 8) {
		uint2 q = *(const uint2 *)a;
		w[0] = q.x, w[1] = q.y;
	} else {
#pragma unroll
		for (int h = 0; h < BYTES / 16; h++) {
			uint4 q = ((const uint4 *)a)[h];
			w[4 * h] = q.x, w[4 * h + 1] = q.y, w[4 * h + 2] = q.z, w[4 * h + 3] = q.w;
		}
	}
#pragma unroll
	for (int k = 0; k < N; k++) {
		if constexpr (SZ == 4)
			v[k] = __uint_as_float(w[k]);
		else
			v[k] = widen<DT>((k & 1) ? w[k / 2] >> 16 : w[k / 2] & 0xffffu);
	}
}

// store_vec8 rounds v[0..7] to dtype DT and writes them as elements
// j..j+7 (j a multiple of 8, p aligned to 8 elements) in 16-byte stores.
template <int DT> __device__ __forceinline__ void store_vec8(void *p, i64 j, const float *v)
{
	if constexpr (DT == DT_FP32) {
		float4 *q = (float4 *)((float *)p + j);
		q[0] = make_float4(v[0], v[1], v[2], v[3]);
		q[1] = make_float4(v[4], v[5], v[6], v[7]);
	} else {
		unsigned w[4];
#pragma unroll
		for (int h = 0; h < 4; h++)
			w[h] = to_bits(v[2 * h], DT) | (to_bits(v[2 * h + 1], DT) << 16);
		*(uint4 *)((unsigned short *)p + j) = make_uint4(w[0], w[1], w[2], w[3]);
	}
}

// sumsq_vec is the accumulation loop of rmsnorm (thread t of T) for a row
// of n elements of dtype DT with n a multiple of VEC and the row aligned
// to VEC elements: the same chunks in the same order, each chunk read in
// one vector load, U chunks loaded before their fmas so that U loads are
// in flight.
template <int VEC, int DT> __device__ __forceinline__ float sumsq_vec(const void *xr, i64 n, int t, int T)
{
	constexpr int U = 32 / VEC;
	const i64 step = (i64)T * VEC;
	float acc = 0.0f;
	i64 base = (i64)t * VEC;
	for (; base + (U - 1) * step < n; base += U * step) {
		float v[U][VEC];
#pragma unroll
		for (int u = 0; u < U; u++)
			load_vec<VEC, DT>(xr, base + u * step, v[u]);
#pragma unroll
		for (int u = 0; u < U; u++)
#pragma unroll
			for (int k = 0; k < VEC; k++)
				acc = __fmaf_rn(v[u][k], v[u][k], acc);
	}
	for (; base < n; base += step) {
		float v[VEC];
		load_vec<VEC, DT>(xr, base, v);
#pragma unroll
		for (int k = 0; k < VEC; k++)
			acc = __fmaf_rn(v[k], v[k], acc);
	}
	return acc;
}

template <int DT> __device__ __forceinline__ float sumsq_dt(const void *xr, i64 n, int t, int T, int vec)
{
	switch (vec) {
	case 1:
		return sumsq_vec<1, DT>(xr, n, t, T);
	case 2:
		return sumsq_vec<2, DT>(xr, n, t, T);
	case 4:
		return sumsq_vec<4, DT>(xr, n, t, T);
	}
	return sumsq_vec<8, DT>(xr, n, t, T);
}

// scale_vec8 is rmsnorm's output loop for n a multiple of 8 and x, w and y
// aligned to 8 elements: thread t writes elements j..j+7 for j = 8t, 8(t+T),
// ... Each element is computed alone, so the loop's shape does not change
// a bit.
template <int DT, int ODT>
__device__ __forceinline__ void scale_vec8(const void *xr, const void *w, void *yr, i64 n, int t, int T, float rstd,
					   int order)
{
	for (i64 j = (i64)t * 8; j < n; j += (i64)T * 8) {
		float xv[8], wv[8], o[8];
		load_vec<8, DT>(xr, j, xv);
		load_vec<8, DT>(w, j, wv);
#pragma unroll
		for (int k = 0; k < 8; k++)
			o[k] = order == 1 ? __fmul_rn(xv[k], __fmul_rn(rstd, wv[k])) : __fmul_rn(__fmul_rn(xv[k], rstd), wv[k]);
		store_vec8<ODT>(yr, j, o);
	}
}

template <int DT>
__device__ __forceinline__ void scale_dt(const void *xr, const void *w, void *yr, i64 n, int t, int T, float rstd,
					 int order, int odt)
{
	if (odt == DT_BF16)
		scale_vec8<DT, DT_BF16>(xr, w, yr, n, t, T, rstd, order);
	else if (odt == DT_FP16)
		scale_vec8<DT, DT_FP16>(xr, w, yr, n, t, T, rstd, order);
	else
		scale_vec8<DT, DT_FP32>(xr, w, yr, n, t, T, rstd, order);
}

__device__ __forceinline__ bool aligned(const void *p, i64 bytes)
{
	return ((unsigned long long)p % (unsigned long long)bytes) == 0;
}

// rmsnorm computes output row i (one block per selected row, blockDim.x =
// Reduce.Threads) of batch row r = rowsel ? rowsel[i] : i:
//
//	thread t: acc = +0
//	  for base = t*vec; base < H; base += T*vec
//	    for v = 0; v < vec && base+v < H; v++: acc = fma(x, x, acc)
//	ss   = block_combine(acc, warp_order, cross_order, add.rn)
//	mean = ss / (float)H                       div.rn
//	rstd = 1 / sqrt(mean + eps)                add.rn, sqrt.rn, div.rn
//	y[j] = round_out((x[j]*rstd)*w[j])         order 0
//	y[j] = round_out(x[j]*(rstd*w[j]))         order 1
//
// taps (optional) gets ss and rstd of output row i at taps[2i], taps[2i+1].
//
// Where the row allows (vec of 1, 2, 4 or 8 dividing H, x aligned to vec
// elements; for the output H a multiple of 8 and x, w, y aligned to 8)
// the same loops run on vector loads and stores (sumsq_vec, scale_vec8),
// in the same order, so with the same bits.
extern "C" __global__ void rmsnorm(const void *x, const void *w, void *y, float *taps, const i64 *rowsel,
				   i64 hidden, i64 in_dt, i64 out_dt, u64 eps_bits, i64 vec, i64 warp_order,
				   i64 cross_order, i64 order)
{
	__shared__ float sh[REDUCE_SHARED];
	const i64 i = blockIdx.x;
	const i64 r = rowsel ? rowsel[i] : i;
	const int T = blockDim.x;
	const int t = threadIdx.x;
	const int idt = (int)in_dt;
	const i64 n = hidden;
	const void *xr = (const char *)x + (size_t)(r * n) * (idt == DT_FP32 ? 4 : 2);
	const int isz = idt == DT_FP32 ? 4 : 2, osz = out_dt == DT_FP32 ? 4 : 2;
	float acc = 0.0f;
	if ((vec == 1 || vec == 2 || vec == 4 || vec == 8) && n % vec == 0 && aligned(x, vec * isz)) {
		if (idt == DT_BF16)
			acc = sumsq_dt<DT_BF16>(xr, n, t, T, (int)vec);
		else if (idt == DT_FP16)
			acc = sumsq_dt<DT_FP16>(xr, n, t, T, (int)vec);
		else
			acc = sumsq_dt<DT_FP32>(xr, n, t, T, (int)vec);
	} else {
		for (i64 base = (i64)t * vec; base < n; base += (i64)T * vec)
			for (int v = 0; v < vec && base + v < n; v++) {
				float xv = load(xr, base + v, idt);
				acc = __fmaf_rn(xv, xv, acc);
			}
	}
	float ss = block_combine(acc, (int)warp_order, (int)cross_order, AddOp(), sh);
	float eps = __uint_as_float((unsigned)eps_bits);
	float mean = __fdiv_rn(ss, (float)n);
	float rstd = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(mean, eps)));
	if (t == 0 && taps) {
		taps[2 * i] = ss;
		taps[2 * i + 1] = rstd;
	}
	void *yr = (char *)y + (size_t)(i * n) * osz;
	if (n % 8 == 0 && aligned(x, 8 * isz) && aligned(w, 8 * isz) && aligned(y, 8 * osz)) {
		if (idt == DT_BF16)
			scale_dt<DT_BF16>(xr, w, yr, n, t, T, rstd, (int)order, (int)out_dt);
		else if (idt == DT_FP16)
			scale_dt<DT_FP16>(xr, w, yr, n, t, T, rstd, (int)order, (int)out_dt);
		else
			scale_dt<DT_FP32>(xr, w, yr, n, t, T, rstd, (int)order, (int)out_dt);
		return;
	}
	for (i64 j = t; j < n; j += T) {
		float xv = load(xr, j, idt);
		float wv = load(w, j, idt);
		float v;
		if (order == 1)
			v = __fmul_rn(xv, __fmul_rn(rstd, wv));
		else
			v = __fmul_rn(__fmul_rn(xv, rstd), wv);
		store(y, i * n + j, (int)out_dt, v);
	}
}
