package fuzz

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/internal/golden"
	"github.com/bitparity/bitparity/spec"
)

var update = flag.Bool("update", false, "rewrite testdata/campaign_minimal.golden")

// TestCampaignMinimalGolden pins what one seeded campaign finds: over
// four drift models and their batch-invariance and path-parity pairs, seed 1, one
// worker, 1500 cases, each finding's relation, kind and targets, its
// minimal case (the whole case file's case, as JSON) and its drift map
// (testdata/campaign_minimal.golden; go test ./fuzz -run
// TestCampaignMinimalGolden -update rewrites it). A change to the
// campaign, the inputs, the shrinker or the mapper that moves a finding,
// its minimal case or its map shows here as a diff.
func TestCampaignMinimalGolden(t *testing.T) {
	c := &Campaign{Duration: 5 * time.Minute, MaxCases: 1500, Seed: 1, Workers: 1,
		Targets:   []string{"drift-gemm-splitk-by-m", "drift-rmsnorm-te-mod32", "drift-rmsnorm-vllm-256", "drift-attn-tile48"},
		Relations: []string{spec.RelBatchInvariance, spec.RelPathParity}}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range res.Findings {
		cj, err := json.Marshal(f.Case)
		if err != nil {
			t.Fatal(err)
		}
		rule := "no map"
		if f.DriftMap != nil {
			rule = f.DriftMap.Dim + ": " + f.DriftMap.Rule
		}
		lines = append(lines, fmt.Sprintf("%s %s %s\n  minimal case: %s\n  drift map: %s",
			f.Relation, f.Kind, strings.Join(f.Case.Targets, ","), cj, rule))
	}
	slices.Sort(lines)
	got := fmt.Sprintf("%d cases, %d findings\n%s\n", res.Cases, len(res.Findings), strings.Join(lines, "\n"))
	golden.Check(t, filepath.Join("testdata", "campaign_minimal.golden"), []byte(got), *update)
}
