package inputs

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestCheckRefusesAsOf holds Check to Of's verdict, error text included,
// on cases of every op, good and bad.
func TestCheckRefusesAsOf(t *testing.T) {
	ok := map[spec.Op]spec.Shape{
		spec.OpGEMM:        {Rows: 5, Hidden: 8, N: 6},
		spec.OpRMSNorm:     {Rows: 5, Hidden: 8},
		spec.OpLogProb:     {Rows: 5, Vocab: 32},
		spec.OpAttnDecode:  {Rows: 3, KV: 5, Heads: 4, KVHeads: 2, HeadDim: 8},
		spec.OpAttnPrefill: {Seqs: 2, SeqLen: 5, Heads: 4, KVHeads: 2, HeadDim: 8},
	}
	huge := 1 << 40
	for op, sh := range ok {
		zero, big := sh, sh
		zero.Hidden, zero.Vocab, zero.HeadDim = 0, 0, 0
		big.Rows, big.Hidden, big.N, big.Vocab, big.KV, big.SeqLen = huge, huge, huge, huge, huge, huge
		for _, tc := range []struct {
			name string
			edit func(*spec.Case)
		}{
			{"good", func(*spec.Case) {}},
			{"boundary", func(c *spec.Case) { c.Dist = spec.DistBoundary }},
			{"zero dimension", func(c *spec.Case) { c.Shape = zero }},
			{"over budget", func(c *spec.Case) { c.Shape = big }},
			{"bad input dtype", func(c *spec.Case) { c.In = "bf17" }},
			{"generator version 9", func(c *spec.Case) { c.GenVersion = 9 }},
			{"generator version 1", func(c *spec.Case) { c.GenVersion = 1 }},
		} {
			t.Run(fmt.Sprintf("%s/%s", op, tc.name), func(t *testing.T) {
				c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: op, In: spec.BF16, Out: spec.BF16,
					Dist: spec.DistNormal, Seed: 3, Eps: 1e-6, Shape: sh}
				tc.edit(&c)
				_, want := Of(c)
				got := Check(c)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("Check: %v; Of: %v", got, want)
				}
				if tc.name != "good" && tc.name != "boundary" && tc.name != "generator version 1" && got == nil {
					t.Fatal("a bad case passed the check")
				}
			})
		}
	}
}

// TestCheckMakesNoValues checks that Check of a gemm case at K = N = 4096
// leaves W (64 MiB of float32) unmade, where Of makes it.
func TestCheckMakesNoValues(t *testing.T) {
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpGEMM, In: spec.BF16, Out: spec.BF16,
		Dist: spec.DistNormal, Seed: 1, Shape: spec.Shape{Rows: 256, Hidden: 4096, N: 4096}}
	allocated := func(f func() error) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := f(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	made := allocated(func() error { _, err := Of(c); return err })
	checked := allocated(func() error { return Check(c) })
	if made < 4096*4096*4 {
		t.Fatalf("Of allocated %d bytes, want at least W's %d: the measure is broken", made, 4096*4096*4)
	}
	if checked > 1<<20 {
		t.Fatalf("Check allocated %d bytes (Of: %d), want under 1 MiB: it made values", checked, made)
	}
}
