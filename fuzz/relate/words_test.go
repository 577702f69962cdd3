package relate

import (
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// offByULPs is a plain-function target (no declared schedule, an ulp
// bound) that returns the oracle's rows with column c moved by ulps[c]
// units of bf16 in every row.
func offByULPs(name string, bound uint64, ulps map[int]uint32) *testTarget {
	return &testTarget{
		info: target.Info{Name: name, Op: spec.OpRMSNorm, Device: "test", Invariant: true, ULPBound: bound},
		run: oracleThen(func(_ *target.Batch, o *target.Output) {
			for r := range o.Rows {
				for c, n := range ulps {
					v := &o.Values[r*o.Cols+c]
					*v = oracle.FromBits(oracle.BF16, oracle.ToBits(oracle.BF16, *v)+n)
				}
			}
		}),
	}
}

// TestOracleParityWords: an oracle-parity finding on a target that
// declares no schedule names the op's oracle and the bound, no schedule;
// its ulps are its first row's max_ulps, at the column that breaks the
// bound, whatever columns differ by less first.
func TestOracleParityWords(t *testing.T) {
	for _, tc := range []struct {
		name     string
		bound    uint64
		ulps     map[int]uint32
		col      int
		maxULPs  uint64
		oracle   string
		firstCol string // the message's note on the first differing column
	}{
		{"bound 2, 1 ulp then 4", 2, map[int]uint32{1: 1, 5: 4}, 5, 4, "held within 2 ulps", "it first differs at column 1"},
		{"bound 1, 3 ulps then 2", 1, map[int]uint32{2: 3, 7: 2}, 2, 3, "held within 1 ulp", ""},
		{"bitwise, 1 ulp then 2", 0, map[int]uint32{0: 1, 3: 2}, 3, 2, "compared bitwise", "it first differs at column 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := offByULPs("test-plain-function", tc.bound, tc.ulps)
			c := rmsCase(spec.RelOracleParity, tg.info.Name, 2, 64, spec.RelParams{})
			f, err := Check(context.Background(), c, tg)
			if err != nil {
				t.Fatal(err)
			}
			if f == nil || f.Kind != spec.KindMismatch || len(f.Mismatches) == 0 {
				t.Fatalf("want a mismatch with row summaries, got %+v", f)
			}
			if f.Col != tc.col || f.ULPs != tc.maxULPs || f.Mismatches[0].MaxULPs != f.ULPs {
				t.Errorf("finding at col %d with %d ulps, first row's max_ulps %d; want col %d, %d ulps, equal to max_ulps",
					f.Col, f.ULPs, f.Mismatches[0].MaxULPs, tc.col, tc.maxULPs)
			}
			if strings.Contains(f.Message, "schedule ") || strings.Contains(f.Message, "threads=") {
				t.Errorf("message names a schedule the target did not declare: %s", f.Message)
			}
			for _, want := range []string{"the op's oracle " + target.OracleName(spec.OpRMSNorm), "declares no schedule", tc.oracle, tc.firstCol} {
				if !strings.Contains(f.Message, want) {
					t.Errorf("message lacks %q: %s", want, f.Message)
				}
			}
		})
	}
}
