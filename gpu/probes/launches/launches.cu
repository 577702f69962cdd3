// launches: does launch throughput scale with host threads, each on a stream of its own?
// Each thread owns a non-blocking stream (mode 0) or shares the legacy default
// stream (mode 1) and repeats a group: 8 launches of a tiny kernel, one 64-byte
// async copy from page-locked memory, an event record and a wait for it, as a
// campaign check does. It prints the groups per second of all threads together.
#include <cstdio>
#include <thread>
#include <vector>
#include <chrono>
#include <atomic>
#include <cuda_runtime.h>
__global__ void tiny(float* p, int n) { int i = blockIdx.x*blockDim.x+threadIdx.x; if (i < n) p[i] = p[i]*1.0001f + 1.f; }
int main() {
  cudaFree(0);
  const int iters = 4000;
  for (int mode = 0; mode < 2; mode++) {
  for (int T : {1, 2, 4, 8, 12}) {
    std::vector<std::thread> th;
    auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < T; t++) th.emplace_back([&, t]() {
      cudaStream_t s = 0; if (mode == 0) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      float* d; cudaMalloc(&d, 4096*4); char* h; cudaMallocHost(&h, 4096);
      cudaEvent_t ev; cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
      for (int i = 0; i < iters; i++) {
        for (int k = 0; k < 8; k++) tiny<<<4, 256, 0, s>>>(d, 1024);
        cudaMemcpyAsync(d, h, 64, cudaMemcpyHostToDevice, s);
        cudaEventRecord(ev, s);
        cudaEventSynchronize(ev);
      }
    });
    for (auto& x : th) x.join();
    double sec = std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count();
    printf("%s threads=%2d  groups/s=%8.0f  launches/s=%9.0f  us/group/thread=%.1f\n", mode==0?"own-stream":"legacy    ", T, T*iters/sec, T*iters*8/sec, sec*1e6/iters);
  }}
  return 0;
}
