package reports

import (
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// nightWith is a result of one night that found the drift model
// drift-rmsnorm-rows32 in dtype dt (through its oracle pair) and ran it.
func nightWith(day int, dt spec.DType, found bool) Source {
	start := time.Date(2026, 12, day, 2, 0, 0, 0, time.UTC)
	r := spec.Result{Version: spec.ResultVersion, Started: start, Seed: uint64(day), Cases: 1000,
		Targets: []spec.TargetStats{
			{Target: "drift-rmsnorm-rows32", Cases: 500, Op: spec.OpRMSNorm, Relations: []string{spec.RelBatchInvariance}},
			{Target: "oracle-rmsnorm", Cases: 500, Invariant: true, Op: spec.OpRMSNorm, Relations: []string{spec.RelOracleParity}},
		}}
	if found {
		c := spec.Case{Version: 1, Op: spec.OpRMSNorm, Relation: spec.RelOracleParity,
			Targets: []string{"oracle-rmsnorm", "drift-rmsnorm-rows32"}, Shape: spec.Shape{Rows: 32 + day, Hidden: 64},
			In: dt, Out: dt, Dist: spec.DistNormal, Seed: uint64(day), GenVersion: 1}
		f := spec.Finding{Case: c, Kind: spec.KindMismatch, Relation: c.Relation, TargetA: c.Targets[0], TargetB: c.Targets[1],
			Expected: true, FoundAt: start.Add(time.Minute), A: spec.Value{Hex: "3f80", Dec: "1"}, B: spec.Value{Hex: "3f81", Dec: "1.0078125"}, ULPs: 1}
		f.Signature = spec.Signature(f)
		r.Findings = []spec.Finding{f}
	}
	return Source{Path: start.Format("2006-01-02") + ".json", Result: r}
}

// TestUnchangedDriftModelStillFailing: a drift model found on two nights,
// in bf16 one night and fp16 the next (another seed and shape too), is
// one bug still failing, not one fixed and one new; its cell is the
// model's own, not the oracle's.
func TestUnchangedDriftModelStillFailing(t *testing.T) {
	r, err := Build([]Source{nightWith(1, spec.BF16, true), nightWith(2, spec.FP16, true)}, generated)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 {
		t.Fatalf("%d entries, want 1: %+v", len(r.Findings), r.Findings)
	}
	e := r.Findings[0]
	if e.Status != StatusStillFailing || e.Nights != 2 || len(e.DTypes) != 2 {
		t.Errorf("status %s on %d nights, dtypes %v; want still failing on 2 nights, bf16 and fp16", e.Status, e.Nights, e.DTypes)
	}
	if s := r.Summary; s.Fixed != 0 || s.New != 0 || s.StillFailing != 1 || s.Unexpected != 0 {
		t.Errorf("summary %+v, want 1 still failing, nothing fixed, new or unexpected", s)
	}
	for _, c := range r.Cells {
		if len(c.Findings) > 0 && c.Target != "drift-rmsnorm-rows32" {
			t.Errorf("the control's finding is filed under %s", c.Target)
		}
	}
}

// TestFixedOnlyAfterRecheck: a bug not seen tonight is "not seen"; it is
// fixed only when a recheck of its case passed.
func TestFixedOnlyAfterRecheck(t *testing.T) {
	srcs := []Source{nightWith(1, spec.BF16, true), nightWith(2, spec.BF16, false)}
	r, err := Build(srcs, generated)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 || r.Findings[0].Status != StatusNotSeen {
		t.Fatalf("entries %+v, want one not seen", r.Findings)
	}
	id := r.Findings[0].Identity
	r, err = BuildWith(srcs, generated, Options{Fixed: map[string]bool{id: true}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Findings[0].Status != StatusFixed || r.Summary.Fixed != 1 {
		t.Errorf("after a passing recheck: %s, summary fixed %d; want fixed", r.Findings[0].Status, r.Summary.Fixed)
	}
}
