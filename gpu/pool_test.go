//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestPoolReuse checks that device buffers are reused across cases: after
// a warm-up that fills the device's caches, running the same shapes again
// (outputs released) allocates no device memory.
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
		b, err := inputs.Of(c)
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
	// warm-up: the first cases fill the device's caches (every seed has
	// its own weights, kept by uploadShared up to sharedEntries)
	const warm = sharedEntries + 2
	for s := uint64(1); s <= warm; s++ {
		step(s)
	}
	before := allocs()
	for s := uint64(warm + 1); s < warm+49; s++ {
		step(s)
	}
	if after := allocs(); after != before {
		t.Fatalf("48 more cases of the same shapes allocated %d device buffers", after-before)
	}
}

// TestConcurrentCompares: compares queued from many goroutines at once
// (each waits outside the device's call queue while another goroutine queues the
// next), on lane 0 and on two lanes of their own streams, each return
// exactly their own summaries, as target.CompareHost.
func TestConcurrentCompares(t *testing.T) {
	root := device(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			d, err := root.Lane(g % 3) // lane 0 and two lanes of their own streams
			if err != nil {
				errs <- err
				return
			}
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for it := 0; it < 40; it++ {
				rows, cols := 1+r.IntN(300), 1+r.IntN(700)
				a := &target.Output{Rows: spec.Iota(rows), Cols: cols, DType: oracle.BF16, Values: make([]float32, rows*cols)}
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
				pairs := spec.Iota(rows)
				got, err := da.CompareRows(db, pairs, pairs, oracle.BF16)
				da.Release()
				db.Release()
				if err != nil {
					errs <- err
					return
				}
				want := target.CompareHost(a, &b, pairs, pairs, oracle.BF16)
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

// TestPairCache: a pair list compared again is found in the cache (no
// upload), an identity list comes from the device's identity list (no
// cache entry), a list of the same hash bucket but other content is not, the
// cache stays within its bounds over many lists, and every compare still
// returns the host's summaries.
func TestPairCache(t *testing.T) {
	d := device(t)
	stats := func() (hits, misses, n int) {
		d.do(func() error { hits, misses, n = d.pairCache.hits, d.pairCache.misses, d.pairCache.n; return nil })
		return
	}
	r := rand.New(rand.NewPCG(3, 3))
	mk := func(rows, cols int) *target.Output {
		o := &target.Output{Rows: spec.Iota(rows), Cols: cols, DType: oracle.FP32, Values: make([]float32, rows*cols)}
		for i := range o.Values {
			o.Values[i] = float32(r.NormFloat64())
		}
		return o
	}
	a := mk(200, 64)
	b := *a
	b.Values = slices.Clone(a.Values)
	b.Values[5*64+7] += 1
	da, err := d.Upload(a)
	if err != nil {
		t.Fatal(err)
	}
	defer da.Release()
	db, err := d.Upload(&b)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Release()
	check := func(ra, rb []int) {
		t.Helper()
		got, err := da.CompareRows(db, ra, rb, oracle.FP32)
		if err != nil {
			t.Fatal(err)
		}
		want := target.CompareHost(a, &b, ra, rb, oracle.FP32)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("pairs %v..: device %+v, host %+v", ra[:min(4, len(ra))], got, want)
		}
	}
	all := spec.Iota(200)
	rot := append(spec.Iota(200)[1:], 0)
	check(rot, rot)
	h0, m0, _ := stats()
	check(rot, rot)
	if h1, m1, _ := stats(); m1 != m0 || h1 != h0+2 {
		t.Fatalf("the same pair list again: hits %d->%d, misses %d->%d; want 2 hits, no miss", h0, h1, m0, m1)
	}
	check(all, all)
	check(all[:17], all[:17])
	if h1, m1, _ := stats(); m1 != m0 || h1 != h0+2 {
		t.Fatalf("identity lists: hits %d->%d, misses %d->%d; want neither (the device's identity list serves them)", h0+2, h1, m0, m1)
	}
	rev := slices.Clone(all)
	slices.Reverse(rev)
	check(rev, all)
	if _, m2, _ := stats(); m2 != m0+1 {
		t.Fatalf("a new list: misses %d->%d, want one more", m0, m2)
	}
	for k := 0; k < 3*pairCacheEntries; k++ {
		n := 1 + r.IntN(200)
		ra := r.Perm(200)[:n]
		check(ra, spec.Iota(n))
	}
	if _, _, n := stats(); n > pairCacheEntries {
		t.Fatalf("%d pair lists cached, bound %d", n, pairCacheEntries)
	}
}
