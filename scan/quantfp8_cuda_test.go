//go:build cuda

package scan

import (
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestQuantFP8GPUScan: our per-token FP8 kernel is certified under
// neighbour replacement and batch invariance over tokens 1..512 at
// hidden 2048; the per-tensor one drifts from 2 tokens on when a row's
// neighbours' values are replaced, as its CPU twin does, in the words
// "depend on other rows' values".
func TestQuantFP8GPUScan(t *testing.T) {
	needGPU(t)
	for _, dim := range []string{DimNeighbours, spec.ScanItems} {
		s := spec.ScanSpec{Target: "cuda-quant-fp8-per-token", Dim: dim, To: 512, Shape: dims("hidden", 2048)}
		r, err := Run(context.Background(), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Certificate == nil {
			t.Errorf("%s --dim %s: not certified: %q, diffs %+v", s.Target, dim, r.Map.Rule, r.Diffs)
		}
		t.Logf("%s --dim %s over 1..%d at hidden 2048: certified=%v, %d rows compared, %s", s.Target, dim, s.To, r.Certificate != nil, r.RowsCompared, r.Elapsed)
	}
	s := spec.ScanSpec{Target: "cuda-quant-fp8-per-tensor", Dim: DimNeighbours, To: 12, Shape: dims("hidden", 32)}
	r, err := Run(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Map.Rule != "tokens <= 1 -> A, tokens >= 2 -> B" || len(r.Diffs) == 0 || !strings.Contains(r.Diffs[0].Words, "depend on other rows' values") {
		t.Errorf("%s: map %q, diffs %+v", s.Target, r.Map.Rule, r.Diffs)
	}
}
