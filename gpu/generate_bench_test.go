//go:build cuda

package gpu

import (
	"testing"
	"time"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/values"
)

// BenchmarkGenerate times gen_values filling 2274 x 4096 bf16 values of
// every distribution on the device, beside two bounds measured in the same
// run: the device's copy bandwidth over the same bytes (the kernel only
// writes them, so 100 % of copy means it is bound by memory, not by its
// arithmetic) and the host generating the same rows on one goroutine
// (values.Tensor.Row).
//
//	go test -tags cuda -run '^$' -bench Generate ./gpu/
func BenchmarkGenerate(b *testing.B) {
	const rows, cols = 2274, 4096
	n := rows * cols
	d, copyBW := benchDevice(b, 2*n)
	for _, dist := range []spec.Dist{spec.DistNormal, spec.DistHeavy, spec.DistOutlier, spec.DistConstant,
		spec.DistSignedZero, spec.DistSubnormal, spec.DistNearOverflow, spec.DistTies} {
		b.Run(string(dist), func(b *testing.B) {
			t := values.Tensor{Seed: 1, ID: values.TensorX, Dist: dist, DType: oracle.BF16, Scale: 1}
			code, err := values.DistCode(dist)
			if err != nil {
				b.Fatal(err)
			}
			var out *buffer
			if err := d.do(func() (err error) { out, err = d.pool.get(2 * n); return err }); err != nil {
				b.Fatal(err)
			}
			defer d.locked(func() { d.pool.put(out) })
			per, err := d.timeDevice(b.N, func() error { return d.launchGen(out, t, code, RowKeys{}, 0, rows, cols) })
			if err != nil {
				b.Fatal(err)
			}
			host := make([]float32, cols)
			start := time.Now()
			const hostRows = 64
			for r := range hostRows {
				if err := t.Row(host, uint64(r)); err != nil {
					b.Fatal(err)
				}
			}
			hostPer := time.Since(start) / hostRows * rows
			// a copy moves 2n bytes twice (read and write); the kernel writes 2n once
			b.ReportMetric(float64(n)/per.Seconds()/1e9, "Gvalues/s")
			b.ReportMetric(100*(2*float64(n)/per.Seconds())/(copyBW/2), "%-of-copy-write")
			b.ReportMetric(float64(per.Microseconds()), "us/tensor")
			b.ReportMetric(hostPer.Seconds()/per.Seconds(), "x-host-1-core")
		})
	}
}
