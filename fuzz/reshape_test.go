package fuzz

import (
	"context"
	"math/rand"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

func TestDrawReshaped(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	hidden := func(_ *rand.Rand, c *spec.Case) { c.Shape.Hidden = 384 }
	rows := map[int]bool{}
	for range 200 {
		c := drawReshaped(r, spec.OpRMSNorm, spec.RelBatchInvariance, hidden)
		if c.Shape.Hidden != 384 {
			t.Fatalf("hidden %d, want the profile's 384", c.Shape.Hidden)
		}
		if CaseCost(c) > SmallCost {
			t.Errorf("case of cost %d over %d: %+v", CaseCost(c), SmallCost, c.Shape)
		}
		rows[c.Shape.Rows] = true
	}
	if len(rows) < 20 {
		t.Errorf("%d distinct row counts in 200 draws: the batch dimension must keep varying", len(rows))
	}
}

func TestCampaignReshape(t *testing.T) {
	seen := 0
	c := &Campaign{Seed: 1, MaxCases: 30, Targets: []string{"oracle-rmsnorm"}, Relations: []string{spec.RelBatchInvariance},
		Reshape: func(_ *rand.Rand, c *spec.Case) { c.Shape.Hidden = 96; seen++ }}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Cases != 30 || seen < 30 || len(res.Findings) != 0 {
		t.Errorf("cases %d, reshaped %d, findings %d", res.Cases, seen, len(res.Findings))
	}
}
