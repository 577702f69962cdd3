// Package values is input generator version 2 (spec.GeneratorVersion 2):
// every input value of a seeded case is a pure function of (seed, tensor
// id, row key, column), computed with integer operations and correctly
// rounded IEEE float64 operations only (+ - * / sqrt, each rounded on its
// own, never fused), so that Go on any machine, plain C and the CUDA kernel
// gpu/kernels/gen.cu compute the same bits. Any row, or any single value,
// can be generated alone, on any device, in any order, and a row's values
// never depend on how many rows the batch has.
//
// The derivation, exactly (all integers uint64, wrapping):
//
//	golden      = 0x9e3779b97f4a7c15
//	mix(x)      = splitmix64: x += golden; x = (x ^ x>>30) * 0xbf58476d1ce4e5b9;
//	              x = (x ^ x>>27) * 0x94d049bb133111eb; x ^ x>>31
//	state       s = mix(mix(seed ^ tensor*golden) ^ key)
//	draw k      d(k) = mix(s + k*golden)
//
// The normal sampler N(u) turns one draw into an N(0,1) value by a
// piecewise-linear inverse CDF over octaves of probability: bit 63 of u is
// the sign; r = u & (2^63-1) is q = r/2^63, the probability of a larger
// magnitude; octave e = min(clz64(r)-1, 61) holds q in [2^-(e+1), 2^-e);
// the bits below r's leading one, f = r << (e+2), pick cell j = f >> 59
// and fraction t = (f << 5 >> 11) * 2^-53; with a = Q[e][j], b = Q[e][j+1]
//
//	|z| = a + round(t * round(b - a))
//
// where Q[e][j] = sqrt(2)·erfc⁻¹(2^-(e+1)·(1 + j/32)) is the committed
// table (quantiles.go, gpu/kernels/gen_table.cuh). Tails reach |z| ≈ 9.2.
// Its largest error against the exact inverse CDF is 5.1e-5 in z and 3.2e-5
// in probability (TestNormalAccuracy measures both).
//
// Value i of a row of n values (scale σ, dtype dt; round(v) = the dtype
// rounding of float32(v); every product and sum rounded in float64):
//
//	normal, boundary  round(N(d(i))·σ)     (boundary is nudged afterwards: boundary)
//	heavy             n, a, b, c = N(d(4i)), N(d(4i+1)), N(d(4i+2)), N(d(4i+3));
//	                  round(n / sqrt(((a·a + b·b) + c·c)/3 + 1e-12) · σ)
//	outlier           the normal value; column d(n) mod n is round(v·1000) of its normal value v
//	constant          the normal value of column 0, in every column
//	signed_zero       d(2i) mod 3: 0 → +0, 1 → -0, 2 → round(N(d(2i+1))·σ)
//	subnormal         u = (d(i)>>11)·2^-53; round((2u - 1)·tiny), tiny = smallest normal of dt
//	near_overflow     h = d(i), u = ((h<<1)>>11)·2^-53; ±round((0.25 + 0.75u)·max), max = largest
//	                  finite of dt, negative when bit 63 of h is set
//	ties              h = d(i), m = (h mod 2^32) mod 33 - 16, p = (h>>32) mod 5;
//	                  round(m·2^(p-5)·σ)
//
// Generator version 1 (package fuzz/inputs, fuzz/inputs/inputs.go) stays for the cases
// it recorded.
package values
