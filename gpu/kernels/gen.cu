// gen.cu: input generator version 2 on the device. Every value is
// gen_value of gen.cuh, the arithmetic values runs in Go and that
// TestCMatchesGo checks in plain C, so the bits are the host's.
#include "gen.cuh"

// gen_values writes rows [r0, r0 + rows) of one tensor, cols values each,
// as the bits of dtype dt (uint16 for bf16 and fp16, uint32 for fp32),
// row-major: out row r is the row with key gen_row_key(key_base, seq_len,
// r0 + r), its state gen_state(seed, tensor, key), its column c
// gen_value(dist, dt, sigma, state, c, cols). Grid-stride loops, rows
// over blockIdx.y and columns over blockIdx.x and threadIdx.x: a thread
// computes a row's state once for the columns it writes, and no index is
// divided. sigma is passed as the bits of a double.
extern "C" __global__ void gen_values(void *out, gen_u64 seed, gen_u64 tensor, long long dist, long long dt,
				      gen_u64 sigma_bits, long long r0, long long rows, long long cols, gen_u64 key_base,
				      long long seq_len)
{
	const double sigma = __longlong_as_double((long long)sigma_bits);
	const long long cstride = (long long)gridDim.x * blockDim.x;
	for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
		const gen_u64 s = gen_state(seed, tensor, gen_row_key(key_base, (gen_u64)seq_len, (gen_u64)(r0 + r)));
		for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += cstride) {
			const long long i = r * cols + c;
			const unsigned b = gen_value((int)dist, (int)dt, sigma, s, (gen_u64)c, (gen_u64)cols);
			if (dt == GEN_FP32)
				((unsigned *)out)[i] = b;
			else
				((unsigned short *)out)[i] = (unsigned short)b;
		}
	}
}
