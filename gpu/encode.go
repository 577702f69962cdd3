package gpu

import (
	"encoding/binary"
	"math"

	"github.com/bitparity/bitparity/oracle"
)

// dsize is the size in bytes of one value of dt on the device.
func dsize(dt oracle.DType) int {
	if dt == oracle.FP32 {
		return 4
	}
	return 2
}

// encode writes vals as the little-endian bits of dt into dst
// (len(dst) == len(vals)*dsize(dt)); values are rounded to dt (exact for
// values already of that dtype).
func encode(dst []byte, dt oracle.DType, vals []float32) {
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

// decode widens the little-endian dt bits in src into dst exactly.
func decode(dst []float32, dt oracle.DType, src []byte) {
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
