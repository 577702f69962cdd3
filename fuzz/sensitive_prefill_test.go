package fuzz

import (
	"testing"

	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
)

// QueryPower is the share of (row, alternative) pairs, over the rows of
// sets (per sequence, row position·heads + head), whose alternative the
// row can show (power.Family.AtLength at its KV length position + 1) and
// shows.
func queryPower(f *power.Family, sets [][]power.Set, heads int) float64 {
	shown, can := 0, 0
	for _, rows := range sets {
		for k, s := range rows {
			shown += s.Len()
			can += f.AtLength(k/heads + 1).Len()
		}
	}
	if can == 0 {
		return 1
	}
	return float64(shown) / float64(can)
}

func TestSensitivePrefillPower(t *testing.T) {
	for _, out := range []spec.DType{spec.BF16, spec.FP16, spec.FP32} {
		for _, d := range []spec.Dist{spec.DistNormal, spec.DistBoundary, spec.DistSensitive} {
			c := powerCase(spec.OpAttnPrefill, 512, 4, out, d, 5)
			f, err := Family(c)
			if err != nil {
				t.Fatal(err)
			}
			keys := []int{0, 1, 2, 3}
			sets, err := QueryShows(c, keys)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: family %d, per-row power %.3f", out, d, len(f.Alts), queryPower(f, sets, c.Shape.Heads))
		}
	}
}
