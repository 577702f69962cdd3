package external

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/bitparity/bitparity/oracle"
)

// wireDType is the safetensors name of an oracle dtype.
func wireDType(d oracle.DType) string {
	switch d {
	case oracle.BF16:
		return wireBF16
	case oracle.FP16:
		return wireF16
	}
	return wireF32
}

// encodeFloats appends the values xs in dtype d (little-endian bits,
// each value rounded to d by oracle.ToBits, which is exact for values
// already of that dtype) to dst. Large tensors are converted in parallel.
func encodeFloats(dst []byte, d oracle.DType, xs []float32) []byte {
	size := d.Bits() / 8
	n := len(dst)
	dst = grow(dst, size*len(xs))
	out := dst[n:]
	chunks(len(xs), func(lo, hi int) {
		switch d {
		case oracle.BF16:
			o := out[2*lo : 2*hi]
			for i, x := range xs[lo:hi] {
				binary.LittleEndian.PutUint16(o[2*i:], oracle.BF16FromF32(x))
			}
		case oracle.FP16:
			o := out[2*lo : 2*hi]
			for i, x := range xs[lo:hi] {
				binary.LittleEndian.PutUint16(o[2*i:], oracle.FP16FromF32(x))
			}
		default:
			o := out[4*lo : 4*hi]
			for i, x := range xs[lo:hi] {
				binary.LittleEndian.PutUint32(o[4*i:], math.Float32bits(x))
			}
		}
	})
	return dst
}

// chunkSize is the number of values one goroutine converts.
const chunkSize = 1 << 18

// chunks calls fn on [lo, hi) pieces of [0, n) of chunkSize values, on up
// to GOMAXPROCS goroutines; each piece is written by one call only.
func chunks(n int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), (n+chunkSize-1)/chunkSize)
	if workers <= 1 {
		fn(0, n)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(chunkSize)) - chunkSize
				if lo >= n {
					return
				}
				fn(lo, min(lo+chunkSize, n))
			}
		}()
	}
	wg.Wait()
}

// encodeInt32s appends xs to dst as little-endian int32s (wire I32).
func encodeInt32s(dst []byte, xs []int32) []byte { return encodeInts(dst, xs, 4) }

// encodeInt64s appends xs to dst as little-endian int64s (wire I64).
func encodeInt64s(dst []byte, xs []int) []byte { return encodeInts(dst, xs, 8) }

// encodeInts appends xs to dst as little-endian integers of size bytes, 4
// or 8, growing dst once.
func encodeInts[T int | int32](dst []byte, xs []T, size int) []byte {
	n := len(dst)
	dst = grow(dst, size*len(xs))
	out := dst[n:]
	for i, x := range xs {
		if size == 4 {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
		} else {
			binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
		}
	}
	return dst
}

// grow extends dst by n bytes, reallocating only when its capacity is short.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		nd := make([]byte, len(dst), len(dst)+n)
		copy(nd, dst)
		dst = nd
	}
	return dst[:len(dst)+n]
}

// decodeFloats widens the tensor's values of dtype d to fp32 (exact) into
// dst, which must have the tensor's element count. Large tensors are
// converted in parallel.
func decodeFloats(dst []float32, t tensor) error {
	switch t.dtype {
	case wireBF16, wireF16, wireF32:
	default:
		return fmt.Errorf("dtype %s is not a float dtype", t.dtype)
	}
	chunks(len(dst), func(lo, hi int) {
		d := dst[lo:hi]
		switch t.dtype {
		case wireBF16:
			in := t.data[2*lo : 2*hi]
			for i := range d {
				d[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(in[2*i:])) << 16)
			}
		case wireF16:
			in := t.data[2*lo : 2*hi]
			for i := range d {
				d[i] = oracle.FP16ToF32(binary.LittleEndian.Uint16(in[2*i:]))
			}
		case wireF32:
			in := t.data[4*lo : 4*hi]
			for i := range d {
				d[i] = math.Float32frombits(binary.LittleEndian.Uint32(in[4*i:]))
			}
		}
	})
	return nil
}

func decodeFloat32s(t tensor) []float32 {
	out := make([]float32, len(t.data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.data[4*i:]))
	}
	return out
}
