//go:build cuda

package gpu

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/values"
)

// TestDeviceNudge checks the device's boundary rmsnorm and gemm rows bit
// for bit against inputs.Of (the host's nudge) over every input and
// output dtype (an fp32 output: no nudge), row lengths from the smallest
// nudged past 4096 and not multiples of the schedule's vector or thread
// count, eps values, column counts and seeds; then that the generated
// cache keeps nudged and plain rows of one tensor apart (the nudge is in
// the key).
func TestDeviceNudge(t *testing.T) {
	d, err := Default()
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	var cases []spec.Case
	dts := []spec.DType{spec.BF16, spec.FP16, spec.FP32}
	for _, in := range dts {
		for _, out := range dts {
			for i, h := range []int{8, 9, 67, 96, 1000, 4096, 5003} {
				cases = append(cases, spec.Case{Op: spec.OpRMSNorm, In: in, Out: out, Eps: []float32{1e-6, 1e-5, 0}[i%3],
					Shape: spec.Shape{Rows: 1 + 37*i%64, Hidden: h}})
			}
			for i, k := range []int{4, 5, 33, 100, 1024, 4100} {
				cases = append(cases, spec.Case{Op: spec.OpGEMM, In: in, Out: out,
					Shape: spec.Shape{Rows: 1 + 29*i%50, Hidden: k, N: []int{1, 3, 8, 64, 300}[i%5]}})
			}
		}
	}
	rows := 0
	for ci, c := range cases {
		c.Version, c.GenVersion, c.Dist, c.Seed = spec.CaseVersion, 2, spec.DistBoundary, 0xb0+uint64(ci)
		name := fmt.Sprintf("%s %s-%s/%dx%d", c.Op, c.In, c.Out, c.Shape.Rows, c.Shape.Hidden)
		host, err := inputs.Of(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := nudgedOnDevice(d, c, host, true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, cols := itemValues(host)
		for i, v := range want {
			if w := oracle.ToBits(host.In, v); got[i] != w {
				t.Fatalf("%s: row %d value %d: device %#x, host %#x", name, i/cols, i%cols, got[i], w)
			}
		}
		rows += c.Shape.Rows
	}
	t.Logf("%d cases, %d nudged rows bit for bit", len(cases), rows)

	// One tensor, nudged and not: the cache must not hand one for the other.
	for _, op := range []spec.Op{spec.OpRMSNorm, spec.OpGEMM} {
		c := spec.Case{Version: spec.CaseVersion, GenVersion: 2, Op: op, In: spec.BF16, Out: spec.BF16,
			Dist: spec.DistBoundary, Seed: 77, Eps: 1e-6, Shape: spec.Shape{Rows: 8, Hidden: 256, N: 16}}
		host, err := inputs.Of(c)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := nudgedOnDevice(d, c, host, false)
		if err != nil {
			t.Fatal(err)
		}
		nudged, err := nudgedOnDevice(d, c, host, true)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(plain, nudged) {
			t.Errorf("%s: the nudged rows equal the plain ones: the cache handed the plain tensor for the nudged", op)
		}
	}
}

// itemValues is the per-item tensor of a token batch and its row length.
func itemValues(b *target.Batch) ([]float32, int) {
	if g, ok := b.Input.(*oracle.GEMMInput); ok {
		return g.X, g.K
	}
	r := b.Input.(*oracle.RMSNormInput)
	return r.X, r.Hidden
}

// nudgedOnDevice makes the rows of rmsnorm or gemm case c (host: its
// batch, for the weights) on the device through the generated-tensor
// cache, nudged (as a lazy boundary batch's) or not, and returns their
// bits.
func nudgedOnDevice(d *Device, c spec.Case, host *target.Batch, nudge bool) ([]uint32, error) {
	dt := host.In
	vals, cols := itemValues(host)
	rows := len(vals) / cols
	var w []float32
	var nd *rowNudge
	if g, ok := host.Input.(*oracle.GEMMInput); ok {
		w = g.W
		if nudge {
			nd = gemmNudge(g, c.Seed, encoded(dt, w))
		}
	} else {
		r := host.Input.(*oracle.RMSNormInput)
		w = r.W
		if nudge {
			nd = rmsNormNudge(r, dt, encoded(dt, w))
		}
	}
	n := rows * cols
	out := make([]uint32, n)
	err := d.do(func() error {
		wb, err := d.upload(dt, w)
		if err != nil {
			return err
		}
		defer d.pool.put(wb)
		if nd != nil {
			nd.w = wb
		}
		tn := values.Tensor{Seed: c.Seed, ID: values.TensorX, Dist: c.Dist, DType: dt, Scale: 1}
		x, err := d.generated(tn, 0, rows, cols, nd)
		if err != nil {
			return err
		}
		return d.readBits(out, x, dsize(dt))
	})
	return out, err
}

// BenchmarkDeviceNudge times the device's boundary rmsnorm rows of a
// 2274 x 4096 bf16 batch (a new seed each iteration, so nothing is
// cached): "generate" makes the rows alone (gen_values), "nudge" makes and
// nudges them (gen_values, then nudge_rmsnorm), each waited for. The host
// nudges the same rows with inputs.Of (boundary.RMSNormRows, one
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
	one, err := inputs.Of(c) // the weights: the same for every seed's rows here
	if err != nil {
		b.Fatal(err)
	}
	in := one.Input.(*oracle.RMSNormInput)
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
				var nd *rowNudge
				if nudge {
					nd = rmsNormNudge(in, dt, encoded(dt, in.W))
					nd.w = w
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
