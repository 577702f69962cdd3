package scan

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The scan controls (target/drift_rows.go): each gives its exact map and
// is never certified, over a small range around its onset at a small
// hidden size, on the default draws with taps. Where the change shows in
// some rows of a batch only, the positions that differ are stated; where
// the first rows past the onset cannot show it on the scan's draws, the
// onset is pinned on further draws (second wave on normal draws alone:
// the one row of a batch of 265 rows that changes, row 264, shows it on
// neither draw; the default draws, sensitive ones, show it at once).
func TestControlMaps(t *testing.T) {
	tests := []struct {
		name   string
		s      spec.ScanSpec
		rule   string
		note   string // the positions that differ in a tail class
		pinned []int  // values that joined the class above them on further draws
	}{
		{"one row from 300", items("drift-rmsnorm-one-row-300", 290, 310, 256),
			"rows <= 299 -> A, rows >= 300 -> B", "B: only position 299 differs", nil},
		{"last partial tile from 900", items("drift-rmsnorm-tail-tile-64", 894, 962, 128),
			"rows <= 899 -> A, 900 <= rows <= 959 -> B, rows == 960 -> A, rows >= 961 -> B",
			"B: positions >= 896 differ", nil},
		{"second wave past 264", items("drift-rmsnorm-second-wave-264", 250, 290, 256),
			"rows <= 264 -> A, rows >= 265 -> B", "B: positions >= 264 differ", nil},
		{"second wave past 264, normal draws", normalOnly(items("drift-rmsnorm-second-wave-264", 250, 290, 256)),
			"rows <= 264 -> A, rows >= 265 -> B", "B: positions >= 264 differ", []int{265}},
		{"capture buckets", items("drift-rmsnorm-capture-buckets", 240, 270, 1024),
			"rows <= 248 -> A, rows >= 249 -> B", "", nil},
		{"nondeterministic from 128", items("drift-rmsnorm-atomic-128", 120, 140, 256),
			"rows <= 127 -> A, rows >= 128 -> nondeterministic", "", nil},
		{"odd positions from 100 (test only)", items("test-rmsnorm-odd-100", 90, 110, 64),
			"rows <= 99 -> A, rows >= 100 -> B", "B: positions >= 1 with position % 2 == 1 differ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runDrift(t, tt.s, "a control", tt.rule)
			if r.Map.Note != tt.note {
				t.Errorf("note %q, want %q", r.Map.Note, tt.note)
			}
			var pinned []int
			for _, o := range r.Onsets {
				if o.Joined {
					pinned = append(pinned, o.Value)
				}
			}
			if !slices.Equal(pinned, tt.pinned) {
				t.Errorf("onsets pinned %v, want %v (%+v)", pinned, tt.pinned, r.Onsets)
			}
		})
	}
}

// items is a scan of the items dimension over from..to at hidden size
// hidden, on the default draws.
func items(target string, from, to, hidden int) spec.ScanSpec {
	return spec.ScanSpec{Target: target, Dim: spec.ScanItems, From: from, To: to, Shape: spec.Shape{Hidden: hidden}, Seed: 1}
}

// normalOnly is s on normal draws alone, power not measured.
func normalOnly(s spec.ScanSpec) spec.ScanSpec {
	s.Dists, s.Power = []spec.Dist{spec.DistNormal}, 0
	return s
}

func init() {
	target.Register("test-rmsnorm-odd-100", func() (target.Target, error) {
		return &oddPositions{}, nil
	})
}

// oddPositions is a test-only rmsnorm target: the oracle, except that in
// batches of 100 rows or more it flips the lowest bit of the first output
// value of every row at an odd position (a kernel whose odd rows take
// another path in large batches).
type oddPositions struct{}

func (*oddPositions) Info() target.Info {
	return target.Info{Name: "test-rmsnorm-odd-100", Op: spec.OpRMSNorm, Device: "cpu", Invariant: true,
		Schedule: fmt.Sprint(target.OracleRMSNormSchedule)}
}

func (*oddPositions) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	or, err := target.Lookup(target.OracleName(spec.OpRMSNorm))
	if err != nil {
		return nil, err
	}
	o, err := or.Run(ctx, b, rows)
	if err != nil || b.Rows() < 100 {
		return o, err
	}
	o.Values = slices.Clone(o.Values)
	for i, r := range o.Rows {
		if r%2 == 1 {
			o.Values[i*o.Cols] = flipLow(o.Values[i*o.Cols])
		}
	}
	return o, nil
}
