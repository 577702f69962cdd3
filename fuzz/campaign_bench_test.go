package fuzz

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/internal/gogc"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// campaignStream is the fixed case stream of BenchmarkCampaign: the first
// perPair draws of every invariant pair of a campaign with the seed (the
// draws Campaign.Run would make, pair by pair), interleaved so that every
// stretch of the stream mixes the ops.
func campaignStream(tb testing.TB, seed uint64, perPair int) []spec.Case {
	tb.Helper()
	c := &Campaign{Seed: seed}
	pairs, err := c.pairs()
	if err != nil {
		tb.Fatal(err)
	}
	var inv []*pairState
	for _, p := range pairs {
		if p.invariant {
			inv = append(inv, p)
		}
	}
	var out []spec.Case
	for range perPair {
		for _, p := range inv {
			k := c.draw(p)
			k.Targets = append([]string(nil), p.Targets...)
			out = append(out, k)
		}
	}
	return out
}

// forEach calls fn(i) for every i in [0, n) on workers goroutines that
// take the next index as the campaign's workers take the next case.
func forEach(n, workers int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkCampaign is the CPU campaign's figure: cases/s of Check over a
// fixed case stream (the first 12 draws of each of the 16 invariant pairs
// of a seed-1 campaign, 192 cases; drawing is not timed) with 1 worker and
// with the campaign's default (defaultWorkers), beside its bound measured
// in the same run: the oracle's rate on the same cases, one Run of the
// case's first target on the case's batch, inputs made beforehand
// (oracle-cases/s). Each iteration runs the stream through Check, then
// through the oracle, so both see the same share of a shared machine.
// oracle-bound-ratio is cases/s over oracle-cases/s: what a case costs
// beyond one oracle pass (the relation's other batches, input generation,
// boundary nudging, compares). cases/cpu-s counts the process's CPU time
// (user + system; 0 where getrusage is missing): on a machine shared with
// other jobs it moves less than cases/s. It runs under a campaign's garbage
// collector target (gogc.Campaign, as bitparity run sets it) unless
// GOGC is set.
//
//	go test -run '^$' -bench Campaign -benchtime 3x ./fuzz/
func BenchmarkCampaign(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(gogc.Campaign))
	}
	cases := campaignStream(b, 1, 12)
	ctx := context.Background()
	batches := make([]*target.Batch, len(cases))
	ts := make([]target.Target, len(cases))
	for i, k := range cases {
		var err error
		if batches[i], err = inputs.Of(k); err != nil {
			b.Fatal(err)
		}
		if ts[i], err = target.Lookup(k.Targets[0]); err != nil {
			b.Fatal(err)
		}
	}
	for _, w := range []int{1, defaultWorkers()} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			var check, bound, cpu time.Duration
			for b.Loop() {
				t0, c0 := time.Now(), processCPU()
				forEach(len(cases), w, func(i int) {
					if f, err := Check(ctx, cases[i]); err != nil || f != nil {
						b.Errorf("case %d: finding %v, error %v", i, f != nil, err)
					}
				})
				check += time.Since(t0)
				cpu += processCPU() - c0
				t0 = time.Now()
				forEach(len(cases), w, func(i int) {
					if _, err := ts[i].Run(ctx, batches[i], nil); err != nil {
						b.Errorf("case %d: %v", i, err)
					}
				})
				bound += time.Since(t0)
			}
			n := float64(len(cases) * b.N)
			b.ReportMetric(n/check.Seconds(), "cases/s")
			b.ReportMetric(n/bound.Seconds(), "oracle-cases/s")
			b.ReportMetric(bound.Seconds()/check.Seconds(), "oracle-bound-ratio")
			if cpu > 0 {
				b.ReportMetric(n/cpu.Seconds(), "cases/cpu-s")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkCheck is one case of each relation on the oracle, with its
// allocations: the campaign loop's per-case overhead (inputs, batches,
// compares), the oracle's work included.
//
//	go test -run '^$' -bench Check -benchmem ./fuzz/
func BenchmarkCheck(b *testing.B) {
	cases := campaignStream(b, 1, 1)
	ctx := context.Background()
	for _, k := range cases {
		b.Run(fmt.Sprintf("%s/%s", k.Relation, k.Targets[0]), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if f, err := Check(ctx, k); err != nil || f != nil {
					b.Fatalf("finding %v, error %v", f != nil, err)
				}
			}
		})
	}
}
