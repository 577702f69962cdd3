// reduce.cuh: the block-level combine of oracle.Reduction.
#pragma once
#include "common.cuh"

#define WARP_BUTTERFLY 0
#define WARP_SEQUENTIAL 1
#define CROSS_SEQUENTIAL 0
#define CROSS_TREE 1

// Shared scratch of block_combine: 1024 lanes + 32 warp partials + result.
#define REDUCE_SHARED (1024 + 32 + 1)

// block_combine combines the per-thread accumulators acc of the blockDim.x
// = T threads of one row exactly as oracle.reduce does after its
// accumulation loop:
//
//	warp = min(T, 32) lanes per warp
//	Warp butterfly:  for off = warp/2 .. 1: v[l] = op(v[l], v[l^off])
//	Warp sequential: lane 0: s = v0; s = op(s, v[l]) for l = 1 .. warp-1
//	warp partials p[w] = lane 0 of warp w
//	Cross sequential: ((p0 op p1) op p2) ...; Cross tree: butterfly over p,
//	result p[0]
//
// Every thread of the block gets the result. sh holds REDUCE_SHARED floats.
template <class Op>
__device__ float block_combine(float acc, int warp_order, int cross_order, Op op, float *sh)
{
	const int T = blockDim.x;
	const int t = threadIdx.x;
	const int warp = T < 32 ? T : 32;
	const int warps = T / warp;
	const int lane = t & (warp - 1);
	const int w = t / warp;
	float v = acc;
	if (warp_order == WARP_BUTTERFLY) {
		unsigned mask = T >= 32 ? 0xffffffffu : ((1u << T) - 1u);
		for (int off = warp / 2; off >= 1; off /= 2) {
			float o = __shfl_xor_sync(mask, v, off);
			v = op(v, o);
		}
	} else {
		sh[t] = v;
		__syncthreads();
		if (lane == 0) {
			float s = sh[t];
			for (int l = 1; l < warp; l++)
				s = op(s, sh[t + l]);
			v = s;
		}
	}
	__syncthreads();
	if (lane == 0)
		sh[1024 + w] = v;
	__syncthreads();
	if (t == 0) {
		float r;
		if (cross_order == CROSS_TREE && warps > 1) {
			float p[32], q[32];
			for (int i = 0; i < warps; i++)
				p[i] = sh[1024 + i];
			for (int off = warps / 2; off >= 1; off /= 2) {
				for (int i = 0; i < warps; i++)
					q[i] = op(p[i], p[i ^ off]);
				for (int i = 0; i < warps; i++)
					p[i] = q[i];
			}
			r = p[0];
		} else {
			r = sh[1024];
			for (int i = 1; i < warps; i++)
				r = op(r, sh[1024 + i]);
		}
		sh[1024 + 32] = r;
	}
	__syncthreads();
	float r = sh[1024 + 32];
	__syncthreads();
	return r;
}
