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

// mappedAddr returns the device address of page-locked host memory p
// allocated by allocPinned (cuMemHostGetDevicePointer): kernels store
// there over the bus, and the host reads the value once an event after
// the kernel has completed. The calling thread must have the context
// current.
func mappedAddr(p []byte) (cu.DevicePtr, error) {
	var dp C.CUdeviceptr
	if r := C.cuMemHostGetDevicePointer(&dp, unsafe.Pointer(&p[:1][0]), 0); r != C.CUDA_SUCCESS {
		return 0, fmt.Errorf("gpu: cuMemHostGetDevicePointer: CUresult %d", int(r))
	}
	return cu.DevicePtr(dp), nil
}

func freePinned(b []byte) {
	if cap(b) > 0 {
		cu.MemFreeHost(unsafe.Pointer(&b[:1][0]))
	}
}
