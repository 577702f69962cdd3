//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/oracle"
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
		o1.Release()
		o2.Release()
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

// TestConcurrentCompares: compares queued from many goroutines at once
// (each waits outside the device's lock while another goroutine queues the
// next) each return exactly their own summaries, as fuzz.CompareHost.
func TestConcurrentCompares(t *testing.T) {
	d := device(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for it := 0; it < 40; it++ {
				rows, cols := 1+r.IntN(300), 1+r.IntN(700)
				a := &fuzz.Output{Rows: identityN(rows), Cols: cols, DType: oracle.BF16, Values: make([]float32, rows*cols)}
				for i := range a.Values {
					a.Values[i] = oracle.BF16ToF32(uint16(r.Uint32()) &^ 0x4000) // exponent below 128: finite
				}
				b := *a
				b.Values = slices.Clone(a.Values)
				for k := r.IntN(5); k > 0; k-- {
					j := r.IntN(len(b.Values))
					b.Values[j] = oracle.BF16ToF32(oracle.BF16FromF32(b.Values[j]) ^ 1)
				}
				da, err := d.Upload(a)
				if err != nil {
					errs <- err
					return
				}
				db, err := d.Upload(&b)
				if err != nil {
					errs <- err
					return
				}
				pairs := identityN(rows)
				got, err := da.CompareRows(db, pairs, pairs, oracle.BF16)
				da.Release()
				db.Release()
				if err != nil {
					errs <- err
					return
				}
				want := fuzz.CompareHost(a, &b, pairs, pairs, oracle.BF16)
				for i := range want {
					want[i].SignedZero = false
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					errs <- fmt.Errorf("goroutine %d case %d (%d x %d): device %+v, host %+v", g, it, rows, cols, got, want)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
