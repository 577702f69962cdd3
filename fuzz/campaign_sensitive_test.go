package fuzz

import (
	"context"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/spec"
)

// BenchmarkCampaignSensitive is the host cost of the sensitive draw in a
// campaign: the boundary cases of the campaign stream (the first 300
// draws of every invariant pair, seed 1) that gen.Sensitive may make
// sensitive (gen.SensitiveFits), checked with dist boundary and then with dist sensitive, in
// every iteration so both see the same machine load. It reports each
// draw's ms/case, their ratio and the share of all the stream's cases
// that are eligible: a campaign drawing sensitive for one in
// gen.SensitiveEvery of them spends about eligible/SensitiveEvery x
// sensitive-ms/case beyond its boundary cost.
//
//	go test -run '^$' -bench CampaignSensitive -benchtime 2x ./fuzz/
func BenchmarkCampaignSensitive(b *testing.B) {
	var cases []spec.Case
	stream := campaignStream(b, 1, 300)
	for _, c := range stream {
		if c.Dist != spec.DistBoundary && c.Dist != spec.DistSensitive {
			continue
		}
		if gen.SensitiveFits(c) {
			cases = append(cases, c)
		}
	}
	ctx := context.Background()
	var took [2]time.Duration
	for b.Loop() {
		for k, d := range []spec.Dist{spec.DistBoundary, spec.DistSensitive} {
			t0 := time.Now()
			for _, c := range cases {
				c.Dist = d
				if f, err := Check(ctx, c); err != nil || f != nil {
					b.Errorf("%s %s %s: finding %v, error %v", c.Op, c.Relation, d, f != nil, err)
				}
			}
			took[k] += time.Since(t0)
		}
	}
	n := float64(len(cases) * b.N)
	b.ReportMetric(took[0].Seconds()*1e3/n, "boundary-ms/case")
	b.ReportMetric(took[1].Seconds()*1e3/n, "sensitive-ms/case")
	b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "ratio")
	b.ReportMetric(100*float64(len(cases))/float64(len(stream)), "eligible-%")
	b.ReportMetric(0, "ns/op")
}
