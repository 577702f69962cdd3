//go:build cuda

package gpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/boundary"
	"github.com/bitparity/bitparity/fuzz/values"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestDeviceNudge checks the device's boundary rmsnorm rows bit for bit
// against fuzz.Inputs (the host's nudge) over every input and output dtype
// (an fp32 output: no nudge), hidden sizes from 8 past 4096 and not
// multiples of the schedule's vector or thread count, eps values and
// seeds; then that the generated cache keeps nudged and plain rows of one
// tensor apart (the nudge is in the key).
func TestDeviceNudge(t *testing.T) {
	d, err := Default()
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	type tc struct {
		in, out spec.DType
		rows    int
		hidden  int
		eps     float32
	}
	var cases []tc
	for _, in := range []spec.DType{spec.BF16, spec.FP16, spec.FP32} {
		for _, out := range []spec.DType{spec.BF16, spec.FP16, spec.FP32} {
			for i, h := range []int{8, 9, 67, 96, 1000, 4096, 5003} {
				cases = append(cases, tc{in, out, 1 + 37*i%64, h, []float32{1e-6, 1e-5, 0}[i%3]})
			}
		}
	}
	rows := 0
	for ci, k := range cases {
		name := fmt.Sprintf("%s-%s/%dx%d", k.in, k.out, k.rows, k.hidden)
		c := spec.Case{Version: spec.CaseVersion, GenVersion: 2, Op: spec.OpRMSNorm, In: k.in, Out: k.out,
			Dist: spec.DistBoundary, Seed: 0xb0 + uint64(ci), Eps: k.eps, Shape: spec.Shape{Rows: k.rows, Hidden: k.hidden}}
		host, err := fuzz.Inputs(c)
		if err != nil {
			t.Fatal(err)
		}
		in := host.RMSNorm
		dt := host.In
		got, err := nudgedOnDevice(d, c, in, dt, true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, v := range in.X {
			if want := oracle.ToBits(dt, v); got[i] != want {
				t.Fatalf("%s: row %d value %d: device %#x, host %#x", name, i/k.hidden, i%k.hidden, got[i], want)
			}
		}
		rows += k.rows
	}
	t.Logf("%d cases, %d nudged rows bit for bit", len(cases), rows)

	// One tensor, nudged and not: the cache must not hand one for the other.
	c := spec.Case{Version: spec.CaseVersion, GenVersion: 2, Op: spec.OpRMSNorm, In: spec.BF16, Out: spec.BF16,
		Dist: spec.DistBoundary, Seed: 77, Eps: 1e-6, Shape: spec.Shape{Rows: 8, Hidden: 256}}
	host, err := fuzz.Inputs(c)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := nudgedOnDevice(d, c, host.RMSNorm, host.In, false)
	if err != nil {
		t.Fatal(err)
	}
	nudged, err := nudgedOnDevice(d, c, host.RMSNorm, host.In, true)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range plain {
		if plain[i] == nudged[i] {
			same++
		}
	}
	if same == len(plain) {
		t.Error("the nudged rows equal the plain ones: the cache handed the plain tensor for the nudged")
	}
}

// nudgedOnDevice makes the rows of rmsnorm case c on the device through
// the generated-tensor cache, nudged (as a lazy boundary batch's) or not,
// and returns their bits.
func nudgedOnDevice(d *Device, c spec.Case, in *oracle.RMSNormInput, dt oracle.DType, nudge bool) ([]uint32, error) {
	n := in.Rows * in.Hidden
	out := make([]uint32, n)
	err := d.do(func() error {
		w, err := d.upload(dt, in.W)
		if err != nil {
			return err
		}
		defer d.pool.put(w)
		var nd *rmsNudge
		if nudge {
			rows := boundary.NewRMSNormRows(in.W, in.Eps, dt, in.Out, target.OracleRMSNormSchedule)
			wb := encoded(dt, in.W)
			key := nudgeKey{w: hashWeights(wb), eps: math.Float32bits(in.Eps), out: in.Out}
			nd = &rmsNudge{key: key, probes: rows.Probes(), w: w}
		}
		tn := values.Tensor{Seed: c.Seed, ID: values.TensorX, Dist: c.Dist, DType: dt, Scale: 1}
		x, err := d.generated(tn, 0, in.Rows, in.Hidden, nd)
		if err != nil {
			return err
		}
		size := dsize(dt)
		host := d.stage(n * size)
		if err := d.fromDevice(host, x, 0); err != nil {
			return err
		}
		for i := range out {
			if size == 2 {
				out[i] = uint32(binary.LittleEndian.Uint16(host[2*i:]))
			} else {
				out[i] = binary.LittleEndian.Uint32(host[4*i:])
			}
		}
		return nil
	})
	return out, err
}

// BenchmarkDeviceNudge times the device's boundary rmsnorm rows of a
// 2274 x 4096 bf16 batch (a new seed each iteration, so nothing is
// cached): "generate" makes the rows alone (gen_values), "nudge" makes and
// nudges them (gen_values, then nudge_rmsnorm), each waited for. The host
// nudges the same rows with fuzz.Inputs (boundary.RMSNormRows, one
// goroutine a row) at about 0.2 ms a row of CPU.
//
//	go test -tags cuda -run '^$' -bench DeviceNudge ./gpu/
func BenchmarkDeviceNudge(b *testing.B) {
	d, err := Default()
	if err != nil {
		b.Skipf("no GPU: %v", err)
	}
	const rows, hidden = 2274, 4096
	c := spec.Case{Version: spec.CaseVersion, GenVersion: 2, Op: spec.OpRMSNorm, In: spec.BF16, Out: spec.BF16,
		Dist: spec.DistBoundary, Seed: 1, Eps: 1e-6, Shape: spec.Shape{Rows: 1, Hidden: hidden}}
	one, err := fuzz.Inputs(c) // the weights: the same for every seed's rows here
	if err != nil {
		b.Fatal(err)
	}
	in := one.RMSNorm
	dt := one.In
	for _, nudge := range []bool{false, true} {
		name := map[bool]string{false: "generate", true: "nudge"}[nudge]
		b.Run(name, func(b *testing.B) {
			err := d.do(func() error {
				w, err := d.upload(dt, in.W)
				if err != nil {
					return err
				}
				defer d.pool.put(w)
				var nd *rmsNudge
				if nudge {
					rs := boundary.NewRMSNormRows(in.W, in.Eps, dt, in.Out, target.OracleRMSNormSchedule)
					nd = &rmsNudge{key: nudgeKey{w: hashWeights(encoded(dt, in.W)), eps: math.Float32bits(in.Eps), out: in.Out},
						probes: rs.Probes(), w: w}
				}
				b.ResetTimer()
				for i := range b.N {
					tn := values.Tensor{Seed: 1000 + uint64(i), ID: values.TensorX, Dist: spec.DistBoundary, DType: dt, Scale: 1}
					if _, err := d.generated(tn, 0, rows, hidden, nd); err != nil {
						return err
					}
					if err := d.sync("nudge benchmark"); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
	}
}
