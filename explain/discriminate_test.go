package explain

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// bitsOn returns, for schedule s, its output and tap bits on the probes of
// case c at value v of dim drawn from seed.
func bitsOn(t *testing.T, c spec.Case, dim string, v int, seed uint64, s oracle.Schedule) string {
	t.Helper()
	ps, err := probes(c, dim, v, seed)
	if err != nil {
		t.Fatal(err)
	}
	var k string
	for _, p := range ps {
		out, err := runRows(context.Background(), target.OracleWith(c.Op, s), p.b, p.rows)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out.rows {
			k += r.key(true)
		}
	}
	return k
}

// TestProbesDiscriminate shows that the probes tell schedules apart: the
// grouping of a space by the bits on explain's probes (the case's dtypes
// and the fp32-output refinement, as Infer runs them) is not split any
// further by three times as many probes with other seeds. Schedules the
// probes call equal are therefore equal on every input tried, and the
// number of groups is the number of different computations the space has
// at that shape.
func TestProbesDiscriminate(t *testing.T) {
	const seed = 0x6578706c61696e
	for _, tc := range []struct {
		name string
		c    spec.Case
		dim  string
		v    int
	}{
		{"rmsnorm", spec.Case{Op: spec.OpRMSNorm, Shape: spec.Shape{Rows: 8, Hidden: 512}, In: "bf16", Out: "bf16"}, "rows", 8},
		{"logprob", spec.Case{Op: spec.OpLogProb, Shape: spec.Shape{Rows: 8, Vocab: 1000}, In: "bf16", Out: "bf16"}, "rows", 8},
		{"gemm", spec.Case{Op: spec.OpGEMM, Shape: spec.Shape{Rows: 8, Hidden: 256, N: 4}, In: "bf16", Out: "bf16"}, "rows", 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			space, err := Space(tc.c.Op, 1)
			if err != nil {
				t.Fatal(err)
			}
			c32 := tc.c
			c32.Out = spec.FP32
			fine := map[string]string{} // probe bits -> bits on the bigger set
			groups := 0
			for _, s := range space {
				k := bitsOn(t, tc.c, tc.dim, tc.v, seed, s) + bitsOn(t, c32, tc.dim, tc.v, seed+1000, s)
				var more string
				for i := uint64(1); i <= 3; i++ {
					more += bitsOn(t, c32, tc.dim, tc.v, seed+7919*i, s)
				}
				prev, seen := fine[k]
				switch {
				case !seen:
					fine[k] = more
					groups++
				case prev != more:
					t.Errorf("%v: equal to an earlier schedule on the probes, different on more inputs", s)
				}
			}
			t.Logf("%d schedules, %d different on the probes, none split by 3x more probes", len(space), groups)
		})
	}
}
