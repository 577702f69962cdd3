package scan

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// bulkHeld is a batch held on the host with a bulk check computed there
// (hostPrefixSteps). lie says how the first answer of a value lies, as a
// target that answers the same batch twice with other bits would:
// "flag" flags it with row 0 differing when nothing differs, "bits" gives
// other bits.
type bulkHeld struct {
	hostHeld
	lie   map[int]string
	calls [][]int // the values of every check
}

func (h *bulkHeld) checkPrefixes(ctx context.Context, q prefixQuery) ([]*prefixStep, error) {
	h.calls = append(h.calls, slices.Clone(q.items))
	steps, err := hostPrefixSteps(ctx, h, q, func(v int) bool { return h.lie[v] == "flag" && len(h.calls) == 1 })
	for _, f := range steps {
		if h.lie[f.v] == "bits" && !slices.ContainsFunc(h.calls[:len(h.calls)-1], func(c []int) bool { return slices.Contains(c, f.v) }) {
			f.sum++
		}
	}
	return steps, err
}

// hostPrefixSteps is the bulk check done on the host by the exact
// compare, the device's check by digests: for every v of q.items the
// batch of held items 0..v-1 of h is run and each row compared with the
// same row in q.alone and q.ref; a step with a row differing from its
// item alone (or for which flag is true: row 0) is returned with the
// digests of its first q.panel rows and an FNV-64a sum of its row digests.
func hostPrefixSteps(ctx context.Context, h held, q prefixQuery, flag func(v int) bool) ([]*prefixStep, error) {
	var steps []*prefixStep
	for _, v := range q.items {
		o, err := h.run(ctx, spec.Iota(v))
		if err != nil {
			return nil, err
		}
		rows := spec.Iota(len(o.Rows))
		dA, err := differing(o, q.alone, rows, rows, q.alone.DType, !q.taps)
		if err != nil {
			return nil, err
		}
		if flag != nil && flag(v) && len(dA) == 0 {
			dA = []int{0}
		}
		if len(dA) == 0 {
			continue
		}
		dR, err := differing(o, q.ref, rows, rows, q.alone.DType, !q.taps)
		if err != nil {
			return nil, err
		}
		vals, taps, err := rowDigests(o, rows)
		if err != nil {
			return nil, err
		}
		sum := fnv.New64a()
		var buf [8]byte
		for i, d := range vals {
			binary.LittleEndian.PutUint64(buf[:], d)
			sum.Write(buf[:])
			if q.taps && taps != nil {
				binary.LittleEndian.PutUint64(buf[:], taps[i])
				sum.Write(buf[:])
			}
		}
		p := min(len(rows), q.panel)
		f := &prefixStep{v: v, alone: dA, ref: dR, panel: vals[:p], sum: sum.Sum64()}
		if taps != nil {
			f.panelTaps = taps[:p]
		}
		steps = append(steps, f)
	}
	return steps, nil
}

// withBulk makes every batch of the scans that follow (until the test
// ends) a bulkHeld with lie, and returns the batches made.
func withBulk(t *testing.T, lie map[int]string) *[]*bulkHeld {
	t.Helper()
	old := holders
	made := &[]*bulkHeld{}
	holders = []func(target.Target, *target.Batch) (held, error){func(tg target.Target, b *target.Batch) (held, error) {
		h := &bulkHeld{hostHeld: hostHeld{t: tg, b: b}, lie: lie}
		*made = append(*made, h)
		return h, nil
	}}
	t.Cleanup(func() { holders = old })
	return made
}

// A scan through the bulk check gives what the per-step path gives: the
// same map, diffs and counts, values below PanelItems never checked in
// bulk. Rows settled by transitivity (a passed value's rows whose items
// differ from themselves alone in the reference batch) are recorded but
// not compared, so RowsCompared is lower by them. A value the bulk check
// flags runs twice on both paths (the check's run and its rerun; the
// step and its rerun, determinism.go), so Batches are equal.
func TestBulkMatchesPerStep(t *testing.T) {
	tests := []struct {
		name    string
		s       spec.ScanSpec
		flagged []int // values the check flags on the first draw
		settled int64 // rows the per-step path compares with the reference batch and the bulk check settles
	}{
		{"oracle certified", rmsnormScan("oracle-rmsnorm", 150, 64), nil, 0},
		{"planted rows % 89", rmsnormScan("test-rmsnorm-mod89", 200, 64), []int{89, 178}, 0},
		{"TE rows % 32", spec.ScanSpec{Target: "drift-rmsnorm-te-mod32", From: 1, To: 130, Shape: spec.Shape{Hidden: 1024},
			Seed: 1, Dists: []spec.Dist{spec.DistNormal}}, []int{64, 96, 128}, 0},
		{"vLLM 256", spec.ScanSpec{Target: "drift-rmsnorm-vllm-256", From: 240, To: 270, Shape: spec.Shape{Hidden: 1024},
			Seed: 1, Dists: []spec.Dist{spec.DistNormal}}, []int{256, 257, 258, 259, 260, 261, 262, 263, 264, 265, 266, 267, 268, 269, 270},
			(240 + 255) * 16 / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := Run(context.Background(), tt.s, Options{perStep: true})
			if err != nil {
				t.Fatal(err)
			}
			made := withBulk(t, nil)
			got, err := Run(context.Background(), tt.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(*made) == 0 || len((*made)[0].calls) == 0 {
				t.Fatal("the bulk check never ran")
			}
			h := (*made)[0]
			lo := max(tt.s.From, PanelItems)
			var flagged, checked []int
			seen := map[int]int{}
			for _, c := range h.calls {
				for _, v := range c {
					if seen[v]++; seen[v] == 1 {
						checked = append(checked, v)
					}
				}
			}
			slices.Sort(checked)
			if len(checked) != tt.s.To-lo+1 || checked[0] != lo || checked[len(checked)-1] != tt.s.To {
				t.Errorf("bulk checks cover %v, want %d..%d", short(checked), lo, tt.s.To)
			}
			for _, d := range got.Diffs { // the reference batch's is at To, flagged too where it differs
				if d.Draw == got.Spec.Dists[0] && d.Against == "item alone" && d.Value >= lo && !slices.Contains(flagged, d.Value) {
					flagged = append(flagged, d.Value)
				}
			}
			slices.Sort(flagged)
			if !reflect.DeepEqual(flagged, tt.flagged) {
				t.Errorf("values differing from their items alone on draw %s: %v, want %v", got.Spec.Dists[0], flagged, tt.flagged)
			}
			for v, n := range seen { // a flagged value is checked again, once
				want := 1
				if slices.Contains(tt.flagged, v) {
					want = 2
				}
				if n != want {
					t.Errorf("value %d checked %d times in bulk, want %d", v, n, want)
				}
			}
			if !reflect.DeepEqual(got.Map, want.Map) {
				t.Errorf("map %s %q, per step %s %q", got.Map.Kind, got.Map.Rule, want.Map.Kind, want.Map.Rule)
			}
			if !reflect.DeepEqual(got.Diffs, want.Diffs) {
				t.Errorf("diffs\n%+v\nper step\n%+v", got.Diffs, want.Diffs)
			}
			if got.Differing != want.Differing || got.Batches != want.Batches || got.RowsCompared != want.RowsCompared-tt.settled {
				t.Errorf("differing %d, batches %d, rows compared %d; per step %d, %d, %d (less %d settled)",
					got.Differing, got.Batches, got.RowsCompared, want.Differing, want.Batches, want.RowsCompared, tt.settled)
			}
			if (got.Certificate == nil) != (want.Certificate == nil) {
				t.Errorf("certified %v, per step %v", got.Certificate != nil, want.Certificate != nil)
			}
		})
	}
}

// What a bulk scan counts: every item alone and the reference batch, then
// one batch and v rows compared a value (oracle-rmsnorm: nothing differs,
// so nothing is compared with the reference batch).
func TestBulkCounts(t *testing.T) {
	withBulk(t, nil)
	s := rmsnormScan("oracle-rmsnorm", 100, 32)
	s.From, s.Dists = 64, []spec.Dist{spec.DistNormal}
	r := run(t, s)
	var rows int64 = 100 // the reference batch against its items alone
	for v := 64; v <= 100; v++ {
		rows += int64(v)
	}
	if r.Batches != 100+1+37 || r.RowsCompared != rows || r.Certificate == nil {
		t.Errorf("batches %d, rows compared %d, certified %v; want %d, %d, true", r.Batches, r.RowsCompared, r.Certificate != nil, 100+1+37, rows)
	}
}

// short prints the first and last few of vs.
func short(vs []int) string {
	if len(vs) > 8 {
		return fmt.Sprintf("%v ... %v (%d)", vs[:4], vs[len(vs)-4:], len(vs))
	}
	return fmt.Sprint(vs)
}

// Values below PanelItems never go through the bulk check.
func TestBulkBelowPanel(t *testing.T) {
	made := withBulk(t, nil)
	s := rmsnormScan("oracle-rmsnorm", PanelItems-1, 32)
	s.Dists = []spec.Dist{spec.DistNormal}
	run(t, s)
	for _, h := range *made {
		if len(h.calls) > 0 {
			t.Errorf("bulk checks %v in a scan of 1..%d", h.calls, PanelItems-1)
		}
	}
}

// A value whose first answer in the bulk check is not its second (flagged
// once only, or other bits) is nondeterministic: its own class in the
// map, a diff against the same batch run again on its draw; nothing is
// certified and the scan does not fail.
func TestBulkNondeterministic(t *testing.T) {
	for _, lie := range []map[int]string{{80: "flag"}, {89: "bits"}} {
		withBulk(t, lie)
		s := rmsnormScan("test-rmsnorm-mod89", 100, 32)
		s.Dists = []spec.Dist{spec.DistNormal}
		r, err := Run(context.Background(), s, Options{})
		if err != nil {
			t.Fatalf("lie %v: %v", lie, err)
		}
		if r.Certificate != nil {
			t.Errorf("lie %v: certified", lie)
		}
		for v := range lie {
			if c := classOf(r.Map, v); c != "nondeterministic" {
				t.Errorf("lie %v: %s = %d is in class %q, want nondeterministic (map %q)", lie, r.Map.Dim, v, c, r.Map.Rule)
			}
			if !slices.ContainsFunc(r.Diffs, func(d Diff) bool {
				return d.Value == v && d.Draw == spec.DistNormal && d.Against == againstItself
			}) {
				t.Errorf("lie %v: no diff of %d against %q in %+v", lie, v, againstItself, r.Diffs)
			}
		}
	}
}

// classOf is the label of the class of value v in m ("" when none).
func classOf(m *spec.DriftMap, v int) string {
	for _, c := range m.Classes {
		if slices.Contains(c.Values, v) {
			return c.Label
		}
	}
	return ""
}

// A case holder (the GPU targets' rows made on the device) serves the
// items dimension only, and a batch it makes without holding it is held
// as any other: either way the scan's results are the plain scan's.
func TestCaseHolders(t *testing.T) {
	s := rmsnormScan("test-rmsnorm-mod89", 100, 32)
	want := run(t, s)
	pad := spec.ScanSpec{Target: "drift-rmsnorm-te-mod32", Dim: spec.ScanPad, Real: 5, From: 5, To: 40, Shape: spec.Shape{Hidden: 64}, Seed: 1}
	old := caseHolders
	t.Cleanup(func() { caseHolders = old })
	for _, holds := range []bool{true, false} {
		calls := 0
		caseHolders = []func(target.Target, spec.Case, *target.Batch) (held, *target.Batch, error){func(tg target.Target, c spec.Case, _ *target.Batch) (held, *target.Batch, error) {
			calls++
			b, err := inputs.Of(c)
			if err != nil || !holds {
				return nil, b, err
			}
			return &hostHeld{t: tg, b: b}, b, nil
		}}
		got := run(t, s)
		if calls != len(got.Spec.Dists) {
			t.Errorf("holds %v: %d calls of the case holder for %d draws", holds, calls, len(got.Spec.Dists))
		}
		if !reflect.DeepEqual(got.Map, want.Map) || !reflect.DeepEqual(got.Diffs, want.Diffs) || got.RowsCompared != want.RowsCompared {
			t.Errorf("holds %v: map %q, %d diffs, %d rows compared; plain %q, %d, %d", holds, got.Map.Rule, len(got.Diffs), got.RowsCompared,
				want.Map.Rule, len(want.Diffs), want.RowsCompared)
		}
		calls = 0
		run(t, pad)
		if calls != 0 {
			t.Errorf("holds %v: the case holder was called %d times in a pad scan", holds, calls)
		}
	}
}
