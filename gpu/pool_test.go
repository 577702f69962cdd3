//go:build cuda

package gpu

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
)

// TestPoolReuse checks that device buffers are reused across cases: after
// one warm-up, running the same shapes again (outputs released) allocates
// no device memory.
func TestPoolReuse(t *testing.T) {
	d := device(t)
	ctx := context.Background()
	tg := lookup(t, Name(spec.OpRMSNorm))
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm, In: spec.BF16,
		Out: spec.BF16, Dist: spec.DistNormal, Eps: 1e-6, Shape: spec.Shape{Rows: 300, Hidden: 1024}}
	allocs := func() (n int) {
		d.do(func() error { n = d.pool.allocs; return nil })
		return n
	}
	step := func(seed uint64) {
		c.Seed = seed
		b, err := fuzz.Inputs(c)
		if err != nil {
			t.Fatal(err)
		}
		o1, err := tg.Run(ctx, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		o2, err := tg.Run(ctx, b, []int{5, 7, 299})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o1.Device.CompareRows(o2.Device, []int{5, 7, 299}, []int{0, 1, 2}, b.Out); err != nil {
			t.Fatal(err)
		}
		o1.Device.Release()
		o2.Device.Release()
	}
	step(1)
	before := allocs()
	for s := uint64(2); s < 50; s++ {
		step(s)
	}
	if after := allocs(); after != before {
		t.Fatalf("48 more cases of the same shapes allocated %d device buffers", after-before)
	}
}
