//go:build cuda

package gpu

// #cgo LDFLAGS: -lcuda
// #include <cuda.h>
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// maxPinned bounds the page-locked staging buffer; larger transfers go
// through ordinary (pageable) Go memory.
const maxPinned = 256 << 20

// allocPinned allocates n bytes of page-locked host memory with
// cuMemAllocHost (gorgonia.org/cu has no wrapper): copies from and to it
// are plain DMA, without the driver's extra staging of pageable memory,
// which matters most for the small per-case copies (taps, compare
// summaries). The calling thread must have the context current.
func allocPinned(n int) ([]byte, error) {
	var p unsafe.Pointer
	if r := C.cuMemAllocHost(&p, C.size_t(n)); r != C.CUDA_SUCCESS {
		return nil, fmt.Errorf("gpu: cuMemAllocHost(%d bytes): CUresult %d", n, int(r))
	}
	return unsafe.Slice((*byte)(p), n), nil
}

func freePinned(b []byte) {
	if cap(b) > 0 {
		cu.MemFreeHost(unsafe.Pointer(&b[:1][0]))
	}
}
