package scan

import (
	"reflect"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// A draw whose batch the host makes (inputs.OnHost: here the sensitive
// draw) is made while the draw before it runs, and the case holder gets
// it: the bits inputs.Of makes for its case. A draw made on the target
// (normal, boundary of rmsnorm) gets none. The results are the plain
// scan's.
func TestScanMakesHostBatchesAhead(t *testing.T) {
	s := rmsnormScan("test-rmsnorm-mod89", 100, 32)
	s.Dists = []spec.Dist{spec.DistNormal, spec.DistSensitive, spec.DistBoundary}
	want := run(t, s)
	old := caseHolders
	t.Cleanup(func() { caseHolders = old })
	var got []bool // per draw: whether the holder got a batch made ahead
	caseHolders = []func(target.Target, spec.Case, *target.Batch) (held, *target.Batch, error){
		func(tg target.Target, c spec.Case, pre *target.Batch) (held, *target.Batch, error) {
			got = append(got, pre != nil)
			b, err := inputs.Of(c)
			if err != nil {
				return nil, nil, err
			}
			if pre != nil && !reflect.DeepEqual(pre.Input, b.Input) {
				t.Errorf("draw %d (%s): the batch made ahead is not inputs.Of's", len(got)-1, c.Dist)
			}
			return &hostHeld{t: tg, b: b}, b, nil
		}}
	r := run(t, s)
	if w := []bool{false, true, false}; !reflect.DeepEqual(got, w) {
		t.Errorf("made ahead by draw %v, want %v", got, w)
	}
	if !reflect.DeepEqual(r.Map, want.Map) || !reflect.DeepEqual(r.Diffs, want.Diffs) || r.RowsCompared != want.RowsCompared {
		t.Errorf("map %q, %d diffs, %d rows compared; plain %q, %d, %d", r.Map.Rule, len(r.Diffs), r.RowsCompared,
			want.Map.Rule, len(want.Diffs), want.RowsCompared)
	}
}
