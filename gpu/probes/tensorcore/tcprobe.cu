// tcprobe runs tensor-core instructions of the H200 (sm_90a) on recorded
// inputs and writes their fp32 outputs, for the bit-accurate model in
// oracle/tensorcore.go (gpu/probes/tensorcore/README.md).
//
//   nvcc -O2 -arch=sm_90a -o tcprobe tcprobe.cu
//   tcprobe MODE IN OUT
//
// MODE is mma-bf16, mma-fp16 (mma.sync.aligned.m16n8k16.row.col.f32.X.X.f32),
// mma-tf32 (m16n8k8 .tf32), wgmma-bf16 or wgmma-fp16
// (wgmma.mma_async.sync.aligned.m64n8k16.f32.X.X, A from registers, B from
// shared memory). IN holds tiles: A (M x K, row-major), B (K x N,
// row-major), as u16 bits (bf16, fp16) or u32 (tf32), then C (M x N, fp32
// bits); OUT gets D (M x N fp32 bits) per tile, D = A·B + C computed by one
// instruction. All little-endian.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e = (x);                                                           \
    if (e != cudaSuccess) {                                                        \
      fprintf(stderr, "tcprobe: %s: %s\n", #x, cudaGetErrorString(e));             \
      exit(3);                                                                     \
    }                                                                              \
  } while (0)

__device__ __forceinline__ uint32_t pack2(const uint16_t *p, int lo, int hi) {
  return (uint32_t)p[lo] | ((uint32_t)p[hi] << 16);
}

// One warp per tile: A 16x16, B 16x8, C/D 16x8. Fragment layouts are the
// PTX ISA's for m16n8k16 (g = lane/4, t = lane%4).
template <bool FP16>
__global__ void mma_k16(const uint16_t *A, const uint16_t *B, const uint32_t *C, uint32_t *D) {
  const uint16_t *a = A + blockIdx.x * 256;
  const uint16_t *b = B + blockIdx.x * 128;
  const uint32_t *c = C + blockIdx.x * 128;
  uint32_t *d = D + blockIdx.x * 128;
  int g = threadIdx.x >> 2, t = threadIdx.x & 3;
  uint32_t a0 = pack2(a, g * 16 + 2 * t, g * 16 + 2 * t + 1);
  uint32_t a1 = pack2(a, (g + 8) * 16 + 2 * t, (g + 8) * 16 + 2 * t + 1);
  uint32_t a2 = pack2(a, g * 16 + 2 * t + 8, g * 16 + 2 * t + 9);
  uint32_t a3 = pack2(a, (g + 8) * 16 + 2 * t + 8, (g + 8) * 16 + 2 * t + 9);
  uint32_t b0 = pack2(b, (2 * t) * 8 + g, (2 * t + 1) * 8 + g);
  uint32_t b1 = pack2(b, (2 * t + 8) * 8 + g, (2 * t + 9) * 8 + g);
  int i0 = g * 8 + 2 * t, i2 = (g + 8) * 8 + 2 * t;
  float d0 = __uint_as_float(c[i0]), d1 = __uint_as_float(c[i0 + 1]);
  float d2 = __uint_as_float(c[i2]), d3 = __uint_as_float(c[i2 + 1]);
  if (FP16)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  d[i0] = __float_as_uint(d0), d[i0 + 1] = __float_as_uint(d1);
  d[i2] = __float_as_uint(d2), d[i2 + 1] = __float_as_uint(d3);
}

// One warp per tile: A 16x8, B 8x8 (tf32 in fp32 registers), C/D 16x8.
__global__ void mma_tf32(const uint32_t *A, const uint32_t *B, const uint32_t *C, uint32_t *D) {
  const uint32_t *a = A + blockIdx.x * 128;
  const uint32_t *b = B + blockIdx.x * 64;
  const uint32_t *c = C + blockIdx.x * 128;
  uint32_t *d = D + blockIdx.x * 128;
  int g = threadIdx.x >> 2, t = threadIdx.x & 3;
  uint32_t a0 = a[g * 8 + t], a1 = a[(g + 8) * 8 + t], a2 = a[g * 8 + t + 4], a3 = a[(g + 8) * 8 + t + 4];
  uint32_t b0 = b[t * 8 + g], b1 = b[(t + 4) * 8 + g];
  int i0 = g * 8 + 2 * t, i2 = (g + 8) * 8 + 2 * t;
  float d0 = __uint_as_float(c[i0]), d1 = __uint_as_float(c[i0 + 1]);
  float d2 = __uint_as_float(c[i2]), d3 = __uint_as_float(c[i2 + 1]);
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  d[i0] = __float_as_uint(d0), d[i0 + 1] = __float_as_uint(d1);
  d[i2] = __float_as_uint(d2), d[i2 + 1] = __float_as_uint(d3);
}

// One warpgroup (128 threads) per tile: A 64x16 from registers (warp w
// holds rows 16w..16w+15 in the m16n8k16 layout), B 16x8 in shared memory
// as two 8x8 core matrices (K-major, no swizzle: core matrix j holds
// b[8j..8j+7][n] for n = 0..7, 16 bytes per n), C/D 64x8.
template <bool FP16>
__global__ void wgmma_k16(const uint16_t *A, const uint16_t *B, const uint32_t *C, uint32_t *D) {
  __shared__ __align__(128) uint16_t sb[128];
  const uint16_t *a = A + blockIdx.x * 1024;
  const uint16_t *b = B + blockIdx.x * 128;
  const uint32_t *c = C + blockIdx.x * 512;
  uint32_t *d = D + blockIdx.x * 512;
  int tid = threadIdx.x, w = tid >> 5, lane = tid & 31;
  {
    int k = tid >> 3, n = tid & 7; // tid < 128: one element of B each
    sb[(k >> 3) * 64 + n * 8 + (k & 7)] = b[k * 8 + n];
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  int g = lane >> 2, t = lane & 3, r0 = 16 * w + g, r1 = r0 + 8;
  uint32_t a0 = pack2(a, r0 * 16 + 2 * t, r0 * 16 + 2 * t + 1);
  uint32_t a1 = pack2(a, r1 * 16 + 2 * t, r1 * 16 + 2 * t + 1);
  uint32_t a2 = pack2(a, r0 * 16 + 2 * t + 8, r0 * 16 + 2 * t + 9);
  uint32_t a3 = pack2(a, r1 * 16 + 2 * t + 8, r1 * 16 + 2 * t + 9);
  int i0 = r0 * 8 + 2 * t, i2 = r1 * 8 + 2 * t;
  float d0 = __uint_as_float(c[i0]), d1 = __uint_as_float(c[i0 + 1]);
  float d2 = __uint_as_float(c[i2]), d3 = __uint_as_float(c[i2 + 1]);
  uint64_t addr = (uint64_t)__cvta_generic_to_shared(sb);
  // start address, leading and stride byte offsets (both 128: one core
  // matrix apart), in 16-byte units; swizzle none.
  uint64_t desc = ((addr & 0x3ffff) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(128 >> 4) << 32);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  if (FP16)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1, 0;\n}"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc), "r"(1));
  else
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1, 0;\n}"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc), "r"(1));
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  d[i0] = __float_as_uint(d0), d[i0 + 1] = __float_as_uint(d1);
  d[i2] = __float_as_uint(d2), d[i2 + 1] = __float_as_uint(d3);
}

static double widen(int kind, uint32_t u) { // kind: 0 bf16, 1 fp16, 2 tf32
  if (kind == 0) {
    uint32_t v = u << 16;
    float f;
    memcpy(&f, &v, 4);
    return f;
  }
  if (kind == 1) {
    int e = (u >> 10) & 31, m = u & 1023;
    double x = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (u & 0x8000) ? -x : x;
  }
  uint32_t v = u & 0xffffe000u;
  float f;
  memcpy(&f, &v, 4);
  return f;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: tcprobe MODE IN OUT\n");
    return 2;
  }
  const char *mode = argv[1];
  int M, N, K, esz, kind;
  bool wg = false;
  if (!strcmp(mode, "mma-bf16")) M = 16, N = 8, K = 16, esz = 2, kind = 0;
  else if (!strcmp(mode, "mma-fp16")) M = 16, N = 8, K = 16, esz = 2, kind = 1;
  else if (!strcmp(mode, "mma-tf32")) M = 16, N = 8, K = 8, esz = 4, kind = 2;
  else if (!strcmp(mode, "wgmma-bf16")) M = 64, N = 8, K = 16, esz = 2, kind = 0, wg = true;
  else if (!strcmp(mode, "wgmma-fp16")) M = 64, N = 8, K = 16, esz = 2, kind = 1, wg = true;
  else {
    fprintf(stderr, "tcprobe: unknown mode %s\n", mode);
    return 2;
  }
  FILE *f = fopen(argv[2], "rb");
  if (!f) {
    perror(argv[2]);
    return 2;
  }
  std::vector<unsigned char> in;
  unsigned char buf[1 << 16];
  size_t r;
  while ((r = fread(buf, 1, sizeof buf, f)) > 0) in.insert(in.end(), buf, buf + r);
  fclose(f);
  size_t tile = (size_t)(M * K + K * N) * esz + (size_t)M * N * 4;
  if (in.size() % tile) {
    fprintf(stderr, "tcprobe: %s: %zu bytes is not a whole number of %zu-byte tiles\n", argv[2], in.size(), tile);
    return 2;
  }
  int tiles = in.size() / tile;
  // Split the tiles into A, B and C arrays.
  std::vector<unsigned char> ha((size_t)tiles * M * K * esz), hb((size_t)tiles * K * N * esz);
  std::vector<uint32_t> hc((size_t)tiles * M * N), hd((size_t)tiles * M * N);
  for (int i = 0; i < tiles; i++) {
    const unsigned char *p = in.data() + i * tile;
    memcpy(&ha[(size_t)i * M * K * esz], p, M * K * esz);
    p += M * K * esz;
    memcpy(&hb[(size_t)i * K * N * esz], p, K * N * esz);
    p += K * N * esz;
    memcpy(&hc[(size_t)i * M * N], p, M * N * 4);
  }
  void *da, *db, *dc, *dd;
  CHECK(cudaMalloc(&da, ha.size()));
  CHECK(cudaMalloc(&db, hb.size()));
  CHECK(cudaMalloc(&dc, hc.size() * 4));
  CHECK(cudaMalloc(&dd, hd.size() * 4));
  CHECK(cudaMemcpy(da, ha.data(), ha.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb.data(), hb.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc, hc.data(), hc.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dd, 0xff, hd.size() * 4));
  if (kind == 2)
    mma_tf32<<<tiles, 32>>>((uint32_t *)da, (uint32_t *)db, (uint32_t *)dc, (uint32_t *)dd);
  else if (wg && kind == 1)
    wgmma_k16<true><<<tiles, 128>>>((uint16_t *)da, (uint16_t *)db, (uint32_t *)dc, (uint32_t *)dd);
  else if (wg)
    wgmma_k16<false><<<tiles, 128>>>((uint16_t *)da, (uint16_t *)db, (uint32_t *)dc, (uint32_t *)dd);
  else if (kind == 1)
    mma_k16<true><<<tiles, 32>>>((uint16_t *)da, (uint16_t *)db, (uint32_t *)dc, (uint32_t *)dd);
  else
    mma_k16<false><<<tiles, 32>>>((uint16_t *)da, (uint16_t *)db, (uint32_t *)dc, (uint32_t *)dd);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(hd.data(), dd, hd.size() * 4, cudaMemcpyDeviceToHost));
  // Sanity check of the fragment layouts: D must be near the fp64 value of
  // A·B + C wherever that is finite and moderate.
  long gross = 0, checked = 0;
  for (int i = 0; i < tiles; i++) {
    const unsigned char *A = &ha[(size_t)i * M * K * esz], *B = &hb[(size_t)i * K * N * esz];
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++) {
        float cf;
        memcpy(&cf, &hc[((size_t)i * M + m) * N + n], 4);
        double s = cf, abs = fabs(cf);
        for (int k = 0; k < K; k++) {
          uint32_t ua, ub;
          if (esz == 2) ua = ((const uint16_t *)A)[m * K + k], ub = ((const uint16_t *)B)[k * N + n];
          else ua = ((const uint32_t *)A)[m * K + k], ub = ((const uint32_t *)B)[k * N + n];
          double p = widen(kind, ua) * widen(kind, ub);
          s += p, abs += fabs(p);
        }
        if (!std::isfinite(abs) || abs > 1e30 || abs < 1e-30) continue;
        float df;
        memcpy(&df, &hd[((size_t)i * M + m) * N + n], 4);
        checked++;
        if (fabs(df - s) > 1e-5 * abs) gross++;
      }
  }
  printf("tcprobe %s: %d tiles, %ld dot products checked against fp64, %ld far off (layout check)\n", mode, tiles, checked, gross);
  FILE *o = fopen(argv[3], "wb");
  if (!o || fwrite(hd.data(), 4, hd.size(), o) != hd.size() || fclose(o)) {
    perror(argv[3]);
    return 3;
  }
  return 0;
}
