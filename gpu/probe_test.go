//go:build cuda

package gpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bitparity/bitparity/oracle"
)

// specials are fp32 values where max, exp, log and the conversions have
// edge cases.
var specials = []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fffffff, 0xffc00001, 0x7f800001,
	0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x3f800000, 0xbf800000, 0x42b20000, 0x42b20001, 0xc2d00000,
	0xc2d00001, 0x42ae0000, 0xc2ae0000, 0xc2b00000, 0xc2c80000, 0x3fb504f3, 0x3fb504f4, 0x7f7fffff, 0xff7fffff,
	0x477fe000, 0x477ff000, 0x38800000, 0x33800000, 0x33000000, 0x3f808000, 0x3f818000}

// probeInputs returns specials plus n random fp32 bit patterns and n
// values spread over exp's and log's useful ranges.
func probeInputs(r *rand.Rand, n int) []float32 {
	xs := make([]float32, 0, len(specials)+2*n)
	for _, b := range specials {
		xs = append(xs, math.Float32frombits(b))
	}
	for i := 0; i < n; i++ {
		xs = append(xs, math.Float32frombits(r.Uint32()))
		xs = append(xs, float32((r.Float64()*2-1)*110))
	}
	return xs
}

// run1D launches an elementwise probe kernel over n values and waits
// (under do).
func (d *Device) run1D(name string, n int, bufs ...*buffer) error {
	params := make([]arg, 0, len(bufs)+1)
	for _, b := range bufs {
		params = append(params, ptrArg(b))
	}
	params = append(params, arg(n))
	if err := d.launch(name, (n+255)/256, 1, 256, params...); err != nil {
		return err
	}
	return d.sync(name)
}

// TestProbes checks the building blocks of the exact kernels element by
// element against the oracle: omax == oracle.Max32, exp32 == oracle.Exp32,
// log32 == oracle.Log32, the bf16/fp16 roundings and the fp16 widening,
// over special and random values. It also reports whether the hardware's
// fmaxf (PTX max.f32) agrees with oracle.Max32; the kernels do not rely on
// it.
func TestProbes(t *testing.T) {
	d := device(t)
	r := rand.New(rand.NewPCG(1, 2))
	xs := probeInputs(r, 1<<20)
	ys := make([]float32, len(xs))
	for i := range ys {
		ys[i] = xs[r.IntN(len(xs))]
		if i < len(specials)*len(specials) {
			xs[i] = math.Float32frombits(specials[i/len(specials)])
			ys[i] = math.Float32frombits(specials[i%len(specials)])
		}
	}
	hs := make([]uint16, len(xs))
	for i := range hs {
		hs[i] = uint16(i)
	}
	n := len(xs)
	var hw, ours, e, l, back []float32
	bf, hf := make([]byte, 2*n), make([]byte, 2*n)
	err := d.do(func() error {
		var bs [8]*buffer
		var err error
		defer func() { d.pool.put(bs[:]...) }()
		if bs[0], err = d.upload(oracle.FP32, xs); err != nil {
			return err
		}
		if bs[1], err = d.upload(oracle.FP32, ys); err != nil {
			return err
		}
		host := d.stage(2 * n)
		for i, h := range hs {
			host[2*i], host[2*i+1] = byte(h), byte(h>>8)
		}
		if bs[2], err = d.toDevice(host); err != nil {
			return err
		}
		for i, sz := range []int{4, 4, 2, 2} {
			if bs[3+i], err = d.pool.get(sz * n); err != nil {
				return err
			}
		}
		bx, by, bh, o1, o2, o3, o4 := bs[0], bs[1], bs[2], bs[3], bs[4], bs[5], bs[6]
		if err := d.run1D("probe_max", n, bx, by, o1, o2); err != nil {
			return err
		}
		if hw, err = d.fetchF32(o1, n); err != nil {
			return err
		}
		if ours, err = d.fetchF32(o2, n); err != nil {
			return err
		}
		if err := d.run1D("probe_explog", n, bx, o1, o2); err != nil {
			return err
		}
		if e, err = d.fetchF32(o1, n); err != nil {
			return err
		}
		if l, err = d.fetchF32(o2, n); err != nil {
			return err
		}
		if err := d.run1D("probe_convert", n, bx, o3, o4, bh, o1); err != nil {
			return err
		}
		if err := d.fromDevice(bf, o3, 0); err != nil {
			return err
		}
		if err := d.fromDevice(hf, o4, 0); err != nil {
			return err
		}
		back, err = d.fetchF32(o1, n)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	hwDiff := 0
	for i := range xs {
		want := math.Float32bits(oracle.Max32(xs[i], ys[i]))
		if got := math.Float32bits(ours[i]); got != want {
			t.Fatalf("omax(%08x, %08x) = %08x, oracle.Max32 %08x", math.Float32bits(xs[i]), math.Float32bits(ys[i]), got, want)
		}
		if math.Float32bits(hw[i]) != want {
			if hwDiff < 5 {
				t.Logf("fmaxf(%08x, %08x) = %08x, oracle.Max32 %08x", math.Float32bits(xs[i]), math.Float32bits(ys[i]), math.Float32bits(hw[i]), want)
			}
			hwDiff++
		}
	}
	t.Logf("max: omax == oracle.Max32 on %d pairs; the hardware's fmaxf (max.f32) differs on %d of them", n, hwDiff)
	for i, x := range xs {
		if got, want := math.Float32bits(e[i]), math.Float32bits(oracle.Exp32(x)); got != want {
			t.Fatalf("exp32(%08x) = %08x, oracle.Exp32 %08x", math.Float32bits(x), got, want)
		}
		if got, want := math.Float32bits(l[i]), math.Float32bits(oracle.Log32(x)); got != want {
			t.Fatalf("log32(%08x) = %08x, oracle.Log32 %08x", math.Float32bits(x), got, want)
		}
	}
	t.Logf("exp32 and log32 bitwise equal to oracle.Exp32 and oracle.Log32 on %d inputs", n)
	for i, x := range xs {
		if got, want := uint16(bf[2*i])|uint16(bf[2*i+1])<<8, oracle.BF16FromF32(x); got != want {
			t.Fatalf("bf16(%08x) = %04x, oracle %04x", math.Float32bits(x), got, want)
		}
		if got, want := uint16(hf[2*i])|uint16(hf[2*i+1])<<8, oracle.FP16FromF32(x); got != want {
			t.Fatalf("fp16(%08x) = %04x, oracle %04x", math.Float32bits(x), got, want)
		}
		if got, want := math.Float32bits(back[i]), math.Float32bits(oracle.FP16ToF32(hs[i])); got != want {
			t.Fatalf("fp16 %04x widened = %08x, oracle %08x", hs[i], got, want)
		}
	}
	t.Logf("bf16/fp16 rounding and fp16 widening bitwise equal to the oracle on %d inputs", n)
}

// fetchF32 copies n fp32 values from b to the host.
func (d *Device) fetchF32(b *buffer, n int) ([]float32, error) {
	host := d.stage(4 * n)
	if err := d.fromDevice(host, b, 0); err != nil {
		return nil, err
	}
	out := make([]float32, n)
	decode(out, oracle.FP32, host)
	return out, nil
}
