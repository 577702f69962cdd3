//go:build cuda

package gpu

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
		var share []int // every threads-th size: each thread gets small and large M
		for i := t; i < len(ms); i += threads {
			share = append(share, ms[i])
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
			if err := warmGemmEx(share, x, w, n, k, ab, c); err != nil {
				errs[t] = fmt.Errorf("thread %d: %w", t, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: warm cuBLAS for %d sizes: %w", target.ErrTargetCrashed, len(ms), err)
	}
	return nil
}
