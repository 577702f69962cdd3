//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/target"
)

// warmThreads is the most OS threads warmShapes runs on.
const warmThreads = 8

// warmShapes makes cuBLAS's first cublasGemmEx call for a batch of each
// size M of ms, before a scan runs them one at a time. The first call at
// a new shape is slow, once a process: cuBLAS chooses the kernel on the
// host and keeps its choice in a cache shared by every handle (on an H100,
// M = 2..256 at K = N = 4096 bf16: 0.09 to 0.15 s on one thread, 0.004 s
// again). Here the sizes are split over up to warmThreads OS threads, each
// with the device's context current, and each calls mul(m) for its sizes:
// the held batch's own launch on the device's own handle, into a scratch
// output nobody reads. cuBLAS's functions may be called from several
// threads with one handle while nobody changes its configuration, and
// nothing does while this runs. The launches go to the handle's stream, in
// order after X and W are made and before the scan's first batch; the
// scratch output goes back to the pool in that order too. It returns when
// every thread has queued its sizes; a failed call wraps
// target.ErrTargetCrashed, as gemmOn's does.
//
// Until 6 December 2026 each thread made its own handle, stream and
// scratch output. In an H100 A/B of the cuBLAS scan (M 1..256, K = N =
// 4096, three draws, three alternated runs each) the two warm-ups took the
// same time within the runs' spread (medians 0.278 and 0.290 s, runs from
// 0.253 to 0.309 s); this one is kept because it makes nothing of its own.
func warmShapes(d *Device, ms []int, mul func(m int) error) error {
	if len(ms) == 0 {
		return nil
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
				errs[t] = fmt.Errorf("thread %d: make the context current: %w", t, err)
				return
			}
			for _, m := range share {
				if err := mul(m); err != nil {
					errs[t] = fmt.Errorf("thread %d: %w", t, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: warm cuBLAS for %d sizes: %w", target.ErrTargetCrashed, len(ms), err)
	}
	return nil
}
