package external

import (
	"encoding/binary"
	"fmt"
	"math"

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
// already of that dtype) to dst.
func encodeFloats(dst []byte, d oracle.DType, xs []float32) []byte {
	switch d {
	case oracle.BF16:
		n := len(dst)
		dst = grow(dst, 2*len(xs))
		out := dst[n:]
		for i, x := range xs {
			binary.LittleEndian.PutUint16(out[2*i:], oracle.BF16FromF32(x))
		}
	case oracle.FP16:
		n := len(dst)
		dst = grow(dst, 2*len(xs))
		out := dst[n:]
		for i, x := range xs {
			binary.LittleEndian.PutUint16(out[2*i:], oracle.FP16FromF32(x))
		}
	default:
		n := len(dst)
		dst = grow(dst, 4*len(xs))
		out := dst[n:]
		for i, x := range xs {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
	}
	return dst
}

func encodeInt32s(dst []byte, xs []int32) []byte {
	n := len(dst)
	dst = grow(dst, 4*len(xs))
	out := dst[n:]
	for i, x := range xs {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return dst
}

func encodeInt64s(dst []byte, xs []int) []byte {
	n := len(dst)
	dst = grow(dst, 8*len(xs))
	out := dst[n:]
	for i, x := range xs {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
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
// dst, which must have the tensor's element count.
func decodeFloats(dst []float32, t tensor) error {
	switch t.dtype {
	case wireBF16:
		for i := range dst {
			dst[i] = oracle.BF16ToF32(binary.LittleEndian.Uint16(t.data[2*i:]))
		}
	case wireF16:
		for i := range dst {
			dst[i] = oracle.FP16ToF32(binary.LittleEndian.Uint16(t.data[2*i:]))
		}
	case wireF32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.data[4*i:]))
		}
	default:
		return fmt.Errorf("dtype %s is not a float dtype", t.dtype)
	}
	return nil
}

func decodeFloat32s(t tensor) []float32 {
	out := make([]float32, len(t.data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.data[4*i:]))
	}
	return out
}
