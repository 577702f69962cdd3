/*
 * gpu/cudacompat/cuda.h: lets gorgonia.org/cu v0.9.6 build against CUDA 13.
 *
 * Put this folder first on the C include path (CGO_CFLAGS=-I.../gpu/cudacompat
 * -I$CUDA_HOME/include; not with -include, which breaks runtime/cgo). It
 * includes the real cuda.h and, for CUDA 13 and later only, restores the
 * pre-13 signatures of the five driver functions whose signatures CUDA 13
 * changed and that gorgonia.org/cu calls with the old arguments:
 * cuCtxCreate, cuMemAdvise, cuMemPrefetchAsync, cuGraphAddDependencies and
 * cuGraphGetEdges. The driver still exports the old entry points
 * (cuCtxCreate_v2 and the unversioned names of the other four); each
 * declaration below binds to that symbol with an asm label, so it works
 * whether CUDA 13's header declares the name as a macro or as a function.
 * With older headers (CUDA 11 and 12) this file only includes cuda.h.
 */
#ifndef BITPARITY_CUDACOMPAT_CUDA_H
#define BITPARITY_CUDACOMPAT_CUDA_H

#include_next <cuda.h>

#if defined(CUDA_VERSION) && CUDA_VERSION >= 13000

#ifdef __cplusplus
extern "C" {
#endif

#undef cuCtxCreate
CUresult CUDAAPI bitparity_cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) __asm__("cuCtxCreate_v2");
#define cuCtxCreate bitparity_cuCtxCreate_v2

#undef cuMemAdvise
CUresult CUDAAPI bitparity_cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device) __asm__("cuMemAdvise");
#define cuMemAdvise bitparity_cuMemAdvise

#undef cuMemPrefetchAsync
CUresult CUDAAPI bitparity_cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream) __asm__("cuMemPrefetchAsync");
#define cuMemPrefetchAsync bitparity_cuMemPrefetchAsync

#undef cuGraphAddDependencies
CUresult CUDAAPI bitparity_cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, size_t numDependencies) __asm__("cuGraphAddDependencies");
#define cuGraphAddDependencies bitparity_cuGraphAddDependencies

#undef cuGraphGetEdges
CUresult CUDAAPI bitparity_cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, size_t *numEdges) __asm__("cuGraphGetEdges");
#define cuGraphGetEdges bitparity_cuGraphGetEdges

#ifdef __cplusplus
}
#endif

#endif /* CUDA_VERSION >= 13000 */
#endif /* BITPARITY_CUDACOMPAT_CUDA_H */
