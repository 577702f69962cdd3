package gpu

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"

	"github.com/bitparity/bitparity/oracle"
)

// dsize is the size in bytes of one value of dt on the device.
func dsize(dt oracle.DType) int {
	if dt == oracle.FP32 {
		return 4
	}
	return 2
}

// parallelMin is the number of values from which encode and decode split
// the work over GOMAXPROCS goroutines.
const parallelMin = 1 << 18

// split calls fn on [lo, hi) chunks of [0, n), on up to GOMAXPROCS
// goroutines when n is large. Chunks are disjoint, so the result does not
// depend on how the work was split.
func split(n int, fn func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), n/parallelMin)
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	per := (n + w - 1) / w
	for lo := 0; lo < n; lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(lo+per, n))
	}
	wg.Wait()
}

// encode writes vals as the little-endian bits of dt into dst
// (len(dst) == len(vals)*dsize(dt)); values are rounded to dt (exact for
// values already of that dtype). Large inputs are encoded in parallel.
func encode(dst []byte, dt oracle.DType, vals []float32) {
	sz := dsize(dt)
	split(len(vals), func(lo, hi int) { encodeSerial(dst[lo*sz:hi*sz], dt, vals[lo:hi]) })
}

func encodeSerial(dst []byte, dt oracle.DType, vals []float32) {
	switch dt {
	case oracle.BF16:
		for i, v := range vals {
			binary.LittleEndian.PutUint16(dst[2*i:], oracle.BF16FromF32(v))
		}
	case oracle.FP16:
		for i, v := range vals {
			binary.LittleEndian.PutUint16(dst[2*i:], oracle.FP16FromF32(v))
		}
	default:
		for i, v := range vals {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	}
}

// hostBytes are Go byte slices that encoded tensors are written into and
// given back to (putHost) once copied to the device.
var hostBytes sync.Pool

// encoded returns vals encoded as the bits of dt (encode) in Go memory,
// for a caller that encodes before queueing its call on the device and copies
// under it (Device.uploadBytes): encoding a large batch takes
// milliseconds, which other workers would otherwise wait out. nil for nil
// vals (a lazy batch's per-item tensor).
func encoded(dt oracle.DType, vals []float32) []byte {
	if vals == nil {
		return nil
	}
	b := hostBuf(len(vals) * dsize(dt))
	encode(b, dt, vals)
	return b
}

// hostBuf returns n bytes of Go memory from hostBytes (or new).
func hostBuf(n int) []byte {
	if p, ok := hostBytes.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]byte, n)
}

// putHost gives an encoded slice back for reuse.
func putHost(b []byte) {
	if cap(b) > 0 {
		hostBytes.Put(&b)
	}
}

// decode widens the little-endian dt bits in src into dst exactly (in
// parallel for large outputs).
func decode(dst []float32, dt oracle.DType, src []byte) {
	sz := dsize(dt)
	split(len(dst), func(lo, hi int) { decodeSerial(dst[lo:hi], dt, src[lo*sz:hi*sz]) })
}

func decodeSerial(dst []float32, dt oracle.DType, src []byte) {
	switch dt {
	case oracle.BF16:
		for i := range dst {
			dst[i] = oracle.BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case oracle.FP16:
		for i := range dst {
			dst[i] = oracle.FP16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	default:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	}
}
