package fuzz

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/values"
)

// BenchmarkGen generates rows of 4096 bf16 values of every distribution
// with generator version 1 (fillRow) and version 2 (values), one row
// key per iteration, on one goroutine, and reports ns/value: version 1 is
// the bound version 2 is measured against in the same run.
//
//	go test -run - -bench Gen -benchtime 20000x ./fuzz/
func BenchmarkGen(b *testing.B) {
	const n = 4096
	dists := []spec.Dist{spec.DistNormal, spec.DistHeavy, spec.DistOutlier, spec.DistConstant,
		spec.DistSignedZero, spec.DistSubnormal, spec.DistNearOverflow, spec.DistTies}
	dst := make([]float32, n)
	for _, d := range dists {
		b.Run("v1/"+string(d), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if err := fillRow(dst, d, oracle.BF16, 1, newRowRNG(1, tensorX, uint64(i))); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/value")
		})
		b.Run("v2/"+string(d), func(b *testing.B) {
			t := values.Tensor{Seed: 1, ID: tensorX, Dist: d, DType: oracle.BF16, Scale: 1}
			for i := 0; b.Loop(); i++ {
				if err := t.Row(dst, uint64(i)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/value")
		})
	}
}

// BenchmarkCampaignCases checks one fixed list of campaign draws (8 per
// pair of fuzz.Pairs on the invariant targets, drawn as the campaign draws
// them, seed 1) with generator version 1 and then version 2 in every
// iteration, so both see the same machine load, and reports each
// version's cases/s and their ratio: the same shapes, relations and
// targets, so the ratio is what the generator alone changes in a CPU
// campaign's checks (minimization and the transformer left out).
//
//	go test -run - -bench CampaignCases -benchtime 4x -cpu 1 ./fuzz/
func BenchmarkCampaignCases(b *testing.B) {
	st := &stream{rng: rand.New(rand.NewSource(1))}
	var cases []spec.Case
	for _, p := range Pairs() {
		if p.Expect {
			continue
		}
		for range 8 {
			c := st.next(p.Op, p.Relation)
			c.Targets = p.Targets
			cases = append(cases, c)
		}
	}
	var took [3]time.Duration
	for b.Loop() {
		for _, v := range []int{1, 2} {
			start := time.Now()
			for _, c := range cases {
				c.GenVersion = v
				if _, err := Check(context.Background(), c); err != nil {
					b.Fatal(err)
				}
			}
			took[v] += time.Since(start)
		}
	}
	n := float64(b.N * len(cases))
	b.ReportMetric(n/took[1].Seconds(), "v1-cases/s")
	b.ReportMetric(n/took[2].Seconds(), "v2-cases/s")
	b.ReportMetric(took[1].Seconds()/took[2].Seconds(), "v2/v1")
}
