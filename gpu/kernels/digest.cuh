// digest.cuh: the row digest, external.RowDigest (the project's one row
// digest, docs/protocol.md), for CUDA and for plain C alike, as gen.cuh
// is: digest_rows and check_steps (compare.cu) run it on the device, and
// TestDigestCMatchesGo (gpu) compiles it with the system C compiler, runs
// every thread's part of a block and checks the sum against RowDigest.
//
// For a row of n words w_0..w_{n-1} (the unsigned integers of its stored
// bits: 16 bits for bf16 and fp16, 32 for fp32),
//
//	D = sum over j of (w_j + 1) * M^(j+1)  mod 2^64,  M = DG_MUL
//
// A sum mod 2^64 is the same in any order, so a block splits a row among
// its B threads as it likes and adds their parts: the digest does not
// depend on the launch shape. Where a row is a whole number of 16-byte
// vectors, thread t reads vectors u = t, t+B, t+2B, ... (W = 16 / word
// size words a vector), DG_UNROLL loads in flight, and adds for each
//
//	M^(uW) * sum over k < W of (w_{uW+k} + 1) * M^(k+1)
//
// with M^(k+1) constants and M^(uW) a running product (M^(Wt), times
// M^(WB) a vector): two 64-bit multiplies a vector besides the words'
// own, and no table in memory. Other rows (and a row's two fp32 taps) are
// read word by word: thread t reads j = t, t+B, ... and adds
// (w_j + 1) * M^(j+1), M^(j+1) a running product too.
#pragma once

#ifdef __CUDACC__
#define DG_FN __device__ __forceinline__
#define DG_UNROLLED _Pragma("unroll")
typedef uint4 dg_vec;
DG_FN dg_vec dg_load(const dg_vec *p) { return __ldcs(p); }
#else
#define DG_FN static inline
#define DG_UNROLLED
typedef struct {
	unsigned x, y, z, w;
} dg_vec;
DG_FN dg_vec dg_load(const dg_vec *p) { return *p; }
#endif

typedef unsigned long long dg_u64;

#define DG_MUL 0x9E3779B97F4A7C15ull
#define DG_UNROLL 4

// DG_Mk is DG_MUL^k mod 2^64 (dg_pow(k)), written out so that a vector's
// sum multiplies by constants.
#define DG_M1 0x9E3779B97F4A7C15ull
#define DG_M2 0xDF442D22CE4859B9ull
#define DG_M3 0x604A5CE3ADDEF82Dull
#define DG_M4 0xD94363FC538227B1ull
#define DG_M5 0x2E2B795F2D10FD85ull
#define DG_M6 0x4BE7956E30A337E9ull
#define DG_M7 0x5ECB31E4CCD2721Dull
#define DG_M8 0x06D4B2611BEB6861ull

// dg_pow is DG_MUL^e mod 2^64.
DG_FN dg_u64 dg_pow(dg_u64 e)
{
	dg_u64 r = 1ull, b = DG_MUL;
	while (e) {
		if (e & 1ull)
			r *= b;
		b *= b;
		e >>= 1;
	}
	return r;
}

// DigestPowers are thread t's starting powers and steps in a block of B
// threads: M^(Wt) and M^(WB) for the vectors, M^(t+1) and M^B for the
// words.
typedef struct {
	dg_u64 vec0, vec_step, word0, word_step;
} DigestPowers;

// dg_powers returns thread t's powers for words of ws bytes (2 or 4).
DG_FN DigestPowers dg_powers(int ws, dg_u64 t, dg_u64 b)
{
	const dg_u64 w = 16 / ws;
	DigestPowers p;
	p.vec0 = dg_pow(w * t);
	p.vec_step = dg_pow(w * b);
	p.word0 = dg_pow(t + 1);
	p.word_step = dg_pow(b);
	return p;
}

// dg_sum16 is sum over k < 8 of (w_k + 1) * M^(k+1) for the eight 16-bit
// words of x (word k of a 32-bit lane is its low half for even k: little
// endian).
DG_FN dg_u64 dg_sum16(dg_vec x)
{
	return ((dg_u64)(x.x & 0xffffu) + 1ull) * DG_M1 + ((dg_u64)(x.x >> 16) + 1ull) * DG_M2 +
	       ((dg_u64)(x.y & 0xffffu) + 1ull) * DG_M3 + ((dg_u64)(x.y >> 16) + 1ull) * DG_M4 +
	       ((dg_u64)(x.z & 0xffffu) + 1ull) * DG_M5 + ((dg_u64)(x.z >> 16) + 1ull) * DG_M6 +
	       ((dg_u64)(x.w & 0xffffu) + 1ull) * DG_M7 + ((dg_u64)(x.w >> 16) + 1ull) * DG_M8;
}

// dg_sum32 is sum over k < 4 of (w_k + 1) * M^(k+1) for the four 32-bit
// words of x.
DG_FN dg_u64 dg_sum32(dg_vec x)
{
	return ((dg_u64)x.x + 1ull) * DG_M1 + ((dg_u64)x.y + 1ull) * DG_M2 + ((dg_u64)x.z + 1ull) * DG_M3 +
	       ((dg_u64)x.w + 1ull) * DG_M4;
}

// dg_part is thread t's part (of a block of b threads, with powers pw =
// dg_powers(ws, t, b)) of the digest of the n words of ws bytes (2 or 4)
// at row; the parts of the b threads add up to the row's digest. vec: the
// row is n * ws / 16 whole 16-byte vectors, 16-byte aligned.
DG_FN dg_u64 dg_part(const void *row, long long n, int ws, int vec, dg_u64 t, dg_u64 b, const DigestPowers *pw)
{
	dg_u64 part = 0;
	if (vec) {
		const dg_vec *v = (const dg_vec *)row;
		const long long nv = n * ws / 16;
		dg_u64 p = pw->vec0;
		for (long long u0 = (long long)t; u0 < nv; u0 += DG_UNROLL * (long long)b) {
			dg_vec x[DG_UNROLL];
			DG_UNROLLED
			for (int k = 0; k < DG_UNROLL; k++) {
				const long long u = u0 + (long long)k * (long long)b;
				if (u < nv) {
					x[k] = dg_load(v + u);
				} else {
					x[k].x = x[k].y = x[k].z = x[k].w = 0;
				}
			}
			DG_UNROLLED
			for (int k = 0; k < DG_UNROLL; k++) {
				if (u0 + (long long)k * (long long)b < nv) {
					part += p * (ws == 2 ? dg_sum16(x[k]) : dg_sum32(x[k]));
					p *= pw->vec_step;
				}
			}
		}
		return part;
	}
	dg_u64 q = pw->word0;
	for (long long j = (long long)t; j < n; j += (long long)b) {
		const unsigned w = ws == 4 ? ((const unsigned *)row)[j] : (unsigned)((const unsigned short *)row)[j];
		part += ((dg_u64)w + 1ull) * q;
		q *= pw->word_step;
	}
	return part;
}
