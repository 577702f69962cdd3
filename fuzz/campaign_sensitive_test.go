package fuzz

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/fuzz/internal/taps"
	"github.com/bitparity/bitparity/spec"
)

// BenchmarkCampaignSensitive is the host cost of the sensitive draw in a
// campaign: the boundary cases of the campaign stream (the first 100
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
	stream := campaignStream(b, 1, 100)
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

// TestSensitiveFindingReplays: a campaign's sensitive case (one row of
// hidden 1024 padded to 300, outputs only) finds the vLLM 256-row threshold, shrinks to a
// case that still says dist sensitive, and that case, written as a case
// file and read back, validates and finds the same bug again: its rows
// depend on (seed, draw, row key) only.
func TestSensitiveFindingReplays(t *testing.T) {
	ctx := taps.Off(context.Background())
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
		Relation: spec.RelPadding, Targets: []string{"drift-rmsnorm-vllm-256"},
		Shape: spec.Shape{Rows: 1, Hidden: 1024}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6,
		Dist: spec.DistSensitive, Seed: 4, Rel: spec.RelParams{Pad: 300, Filler: "zeros"}}
	f, err := Check(ctx, c)
	if err != nil || f == nil {
		t.Fatalf("the sensitive case: finding %v, error %v; want a finding", f, err)
	}
	m, _, err := Minimize(ctx, f, MinimizeOptions{KeepMap: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Case.Dist != spec.DistSensitive {
		t.Fatalf("shrunk to dist %s: the test wants a sensitive minimal case", m.Case.Dist)
	}
	file, err := json.Marshal(m.Case)
	if err != nil {
		t.Fatal(err)
	}
	var back spec.Case
	if err := json.Unmarshal(file, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(); err != nil {
		t.Fatalf("the minimal case file %s: %v", file, err)
	}
	g, err := Check(ctx, back)
	if err != nil || g == nil || g.Kind != m.Kind || !spec.SameSite(g.Site, m.Site) {
		t.Fatalf("the minimal case file %s replays as %+v (error %v), want %+v", file, g, err, m)
	}
	t.Logf("minimal case: %s", file)
}
