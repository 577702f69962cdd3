package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// moeCase is a transformer case of 3 MoE layers (4 experts, top 2) with a
// near-tie router (Config.NearTie), seeded by seed, gemm_splitk_by_m
// planted at site on both paths ("" plants nothing).
func moeCase(seed uint64, site string) spec.Case {
	c := (Gen{MinTokens: 96}).Case(seed)
	c.Shape.Rows = 3
	c.Shape.Dims = map[string]int{DimExperts: 4, DimTopK: 2, DimNearTie: 1}
	c.Relation = spec.RelPathParity
	if site != "" {
		c.Targets = []string{TrainPrefix + "fixed+gemm_splitk_by_m@" + site, InferPrefix + "fixed+gemm_splitk_by_m@" + site}
	}
	return c
}

// TestMoEPathsAgree: with fixed kernels the train and inference paths of
// an MoE model agree on every op output, routing included, near-tie
// router or not.
func TestMoEPathsAgree(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		c := moeCase(seed, "")
		if seed%2 == 0 {
			delete(c.Shape.Dims, DimNearTie)
		}
		f, err := Check(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if f != nil {
			t.Errorf("seed %d: fixed kernels gave a %s finding: %s", seed, f.Kind, f.Message)
		}
	}
}

// TestMoERouteChange: the amplification in the model route. A router GEMM
// that takes split-K by M (gemm_splitk_by_m at L1.router) is found at
// L1.router, and the tokens whose experts it changed are first seen at
// L1.route, exactly; a split-K drift at L0.qkv reaches the router of the
// same layer and changes a token's experts at L0.route; in another case
// the router drift moves only weights at L1 and the experts change a
// layer later, at L2.route. The counts are
// those of these seeds (3 MoE layers, 4 experts, top 2, a near-tie
// router).
func TestMoERouteChange(t *testing.T) {
	for _, tt := range []struct {
		seed        uint64
		site, first string
		route       string
	}{
		{3, "L1.router", "first divergence: L1.router (gemm)", "experts first change at L1.route: 7 of 144 tokens"},
		{2, "L0.qkv", "first divergence: L0.qkv (gemm)", "experts first change at L0.route: 1 of 164 tokens"},
		// the drift at L1's router moves only weights there; the tokens'
		// hidden states then differ, and a token's experts change at L2
		{1, "L1.router", "first divergence: L1.router (gemm)", "experts first change at L2.route: 2 of 126 tokens"},
	} {
		f, err := Check(context.Background(), moeCase(tt.seed, tt.site))
		if err != nil {
			t.Fatal(err)
		}
		if f == nil || f.Kind != spec.KindMismatch {
			t.Fatalf("seed %d, drift at %s: finding %+v, want a mismatch", tt.seed, tt.site, f)
		}
		if !strings.Contains(f.Message, tt.first) || !strings.Contains(f.Message, tt.route) {
			t.Errorf("seed %d, drift at %s: %s\nwant %q and %q", tt.seed, tt.site, f.Message, tt.first, tt.route)
		}
		if want, _ := ParseSite(tt.site); f.Site == nil || f.Site.Layer != want.Layer || f.Site.Op != string(want.Op) {
			t.Errorf("seed %d: site %+v, want %s", tt.seed, f.Site, tt.site)
		}
	}
}

// TestMoECaseErrors: the MoE dims of a case are checked.
func TestMoECaseErrors(t *testing.T) {
	for _, tt := range []struct {
		dims map[string]int
		site string
		want string
	}{
		{map[string]int{DimExperts: 4, DimTopK: 5}, "", "top 1..experts"},
		{map[string]int{DimTopK: 2}, "", "want 0 (a dense MLP)"},
		{map[string]int{DimExperts: 1, DimTopK: 1, DimNearTie: 1}, "", "near-tie router needs 2 experts"},
		{map[string]int{DimExperts: 4, DimTopK: 2, "hidden": 3}, "", "shape.dims hidden=3"},
		{nil, "L0.router", "the model has no experts"},
	} {
		c := moeCase(1, tt.site)
		c.Shape.Dims = tt.dims
		if _, err := FromCase(c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("dims %v at %q: error %v, want %q", tt.dims, tt.site, err, tt.want)
		}
	}
}
