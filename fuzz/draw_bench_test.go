package fuzz

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/spec"
)

// BenchmarkCampaignCases checks one fixed list of campaign draws (8 per
// pair of relate.Pairs on the invariant targets, drawn as the campaign draws
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
	for _, p := range relate.Pairs() {
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
