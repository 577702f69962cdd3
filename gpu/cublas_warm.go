//go:build cuda

package gpu

// #include <cuda.h>
// #include <cublas_v2.h>
//
// // bp_warm computes y = x·w (row-major, as bp_gemmex) once for each of
// // the nm sizes ms, on a stream and a cuBLAS handle of its own, into a
// // scratch output nobody reads, then waits for them and frees what it
// // made. It returns the first failing call's status: a driver error as
// // 1000 + its CUresult, a cuBLAS error as its cublasStatus_t.
// static int bp_warm(const int *ms, int nm, int n, int k, unsigned long long x, unsigned long long w,
// 		int ab, int c, int ysize) {
// 	const float alpha = 1.0f, beta = 0.0f;
// 	int maxm = 0;
// 	for (int i = 0; i < nm; i++) if (ms[i] > maxm) maxm = ms[i];
// 	CUstream s;
// 	CUresult r = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
// 	if (r != CUDA_SUCCESS) return 1000 + r;
// 	CUdeviceptr y;
// 	if ((r = cuMemAlloc(&y, (size_t)maxm * n * ysize)) != CUDA_SUCCESS) { cuStreamDestroy(s); return 1000 + r; }
// 	cublasHandle_t h;
// 	cublasStatus_t st = cublasCreate(&h);
// 	if (st == CUBLAS_STATUS_SUCCESS) {
// 		st = cublasSetStream(h, (cudaStream_t)s);
// 		for (int i = 0; i < nm && st == CUBLAS_STATUS_SUCCESS; i++)
// 			st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, ms[i], k, &alpha,
// 				(const void *)w, (cudaDataType)ab, n, (const void *)x, (cudaDataType)ab, k, &beta,
// 				(void *)y, (cudaDataType)c, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
// 		cublasDestroy(h);
// 	}
// 	r = cuStreamSynchronize(s);
// 	cuMemFree(y);
// 	cuStreamDestroy(s);
// 	if (st != CUBLAS_STATUS_SUCCESS) return st;
// 	return r == CUDA_SUCCESS ? 0 : 1000 + r;
// }
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// warmThreads is the most OS threads warmShapes runs on.
const warmThreads = 8

// warmShapes makes cuBLAS's first cublasGemmEx call for a batch of each
// size M of ms, before a scan runs them one at a time. The first call at
// a new shape is slow, once a process (about 0.27 s for the 786 products
// of one draw of M = 1..256 at K = N = 4096 bf16 on an H200, against
// 0.018 s for the same products again). Here the sizes are split over
// up to warmThreads OS threads, each with the device's context current
// and its own stream and handle, and each computes y = x·w for its sizes
// (x: at least max(ms) rows of k values, w: k x n, both only read) into a
// scratch output nobody reads. Each handle is made as the scan's own is
// (cublasCreate, cuBLAS's defaults). It returns when every thread is
// done; a failed call wraps target.ErrTargetCrashed, as gemmOn's does.
// On the H200 it saved about 0.07 s of that first 0.27 s (the scan's map
// unchanged): most of the cost does not spread over the threads.
func warmShapes(d *Device, x, w *buffer, ms []int, n, k int, ab, c oracle.DType) error {
	if len(ms) == 0 {
		return nil
	}
	if err := d.do(func() error { return d.sync("warm cuBLAS: wait for X and W") }); err != nil {
		return err
	}
	threads := min(warmThreads, runtime.NumCPU(), len(ms))
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for t := range threads {
		var share []C.int // every threads-th size: each thread gets small and large M
		for i := t; i < len(ms); i += threads {
			share = append(share, C.int(ms[i]))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if err := cu.SetCurrentContext(d.ctx); err != nil {
				errs[t] = fmt.Errorf("make the context current: %w", err)
				return
			}
			st := C.bp_warm(&share[0], C.int(len(share)), C.int(n), C.int(k), C.ulonglong(x.ptr), C.ulonglong(w.ptr),
				cudaType(ab), cudaType(c), C.int(dsize(c)))
			switch {
			case st >= 1000:
				errs[t] = fmt.Errorf("thread %d: CUDA error %d", t, int(st)-1000)
			case st != 0:
				errs[t] = fmt.Errorf("thread %d: cuBLAS status %d", t, int(st))
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: warm cuBLAS for %d sizes: %w", target.ErrTargetCrashed, len(ms), err)
	}
	return nil
}
