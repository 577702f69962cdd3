package gpu

import (
	"math"
	"testing"

	"github.com/bitparity/bitparity/oracle"
)

func mathFloat32bits(f float32) uint32 { return math.Float32bits(f) }

// TestEncodeDecode checks the host side of uploads and fetches: encode
// writes the dtype's bits (oracle.ToBits, little endian) and decode widens
// them back exactly, for every dtype, on special values.
func TestEncodeDecode(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1.5, 65504, 3.0e38, float32(math.Inf(1)),
		float32(math.Inf(-1)), math.Float32frombits(0x7fc00000), math.Float32frombits(1), 1.0 / 3}
	for _, dt := range []oracle.DType{oracle.FP32, oracle.BF16, oracle.FP16} {
		buf := make([]byte, len(vals)*dsize(dt))
		encode(buf, dt, vals)
		back := make([]float32, len(vals))
		decode(back, dt, buf)
		for i, v := range vals {
			var got uint32
			if dt == oracle.FP32 {
				got = uint32(buf[4*i]) | uint32(buf[4*i+1])<<8 | uint32(buf[4*i+2])<<16 | uint32(buf[4*i+3])<<24
			} else {
				got = uint32(buf[2*i]) | uint32(buf[2*i+1])<<8
			}
			if want := oracle.ToBits(dt, v); got != want {
				t.Errorf("%s encode(%v) = %x, want %x", dt, v, got, want)
			}
			if math.Float32bits(back[i]) != math.Float32bits(oracle.FromBits(dt, got)) {
				t.Errorf("%s decode(%x) = %08x, want %08x", dt, got, math.Float32bits(back[i]), math.Float32bits(oracle.FromBits(dt, got)))
			}
		}
	}
}

// TestEncodeParallel checks that the parallel split gives the same bytes
// and values as one serial pass on an input large enough to be split.
func TestEncodeParallel(t *testing.T) {
	n := 3*parallelMin + 12345
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = math.Float32frombits(uint32(i) * 2654435761)
	}
	for _, dt := range []oracle.DType{oracle.FP32, oracle.BF16, oracle.FP16} {
		par, ser := make([]byte, n*dsize(dt)), make([]byte, n*dsize(dt))
		encode(par, dt, vals)
		encodeSerial(ser, dt, vals)
		if string(par) != string(ser) {
			t.Fatalf("%s: parallel encode differs from serial", dt)
		}
		a, b := make([]float32, n), make([]float32, n)
		decode(a, dt, par)
		decodeSerial(b, dt, ser)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("%s: parallel decode differs at %d", dt, i)
			}
		}
	}
}

// BenchmarkEncode measures the host side of an upload: 2274 x 4096
// values of the dtype (held as float32) to its bits, on one goroutine (a
// campaign's workers each encode their own batches).
func BenchmarkEncode(b *testing.B) {
	vals := make([]float32, 2274*4096)
	for i := range vals {
		vals[i] = oracle.Round(oracle.FP16, float32(i%1000)/7-70)
	}
	dst := make([]byte, 2*len(vals))
	for _, dt := range []oracle.DType{oracle.BF16, oracle.FP16} {
		b.Run(dt.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(vals)))
			for b.Loop() {
				encodeSerial(dst, dt, vals)
			}
		})
	}
}
