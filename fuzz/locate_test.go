package fuzz

import (
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
)

// A campaign finding of a drift that shows only at some positions of a
// batch (the scan controls of one row and of a second wave) gets a map
// that locates its onset and the positions, never "no swept dimension
// splits": the relation's own sweeps watch positions 0..63 and do not
// split, the prefixes of the batch do (locate.go).
func TestLocatedMaps(t *testing.T) {
	tests := []struct {
		target     string
		rows       int
		seed       uint64 // a draw on which Check finds the drift
		rule, note string
	}{
		{"drift-rmsnorm-one-row-300", 300, 3, "rows <= 299 -> A, rows >= 300 -> B", "B: only position 299 differs"},
		{"drift-rmsnorm-second-wave-264", 266, 0, "rows <= 264 -> A, rows >= 265 -> B", "B: positions >= 264 differ"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance,
				Targets: []string{tt.target}, Shape: spec.Shape{Rows: tt.rows, Hidden: 64}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6,
				Dist: spec.DistNormal, Seed: tt.seed, Rel: spec.RelParams{Batch: 1}}
			f, err := Check(context.Background(), c)
			if err != nil || f == nil {
				t.Fatalf("no finding: %v", err)
			}
			m, err := MapDrift(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			said := words.Drift(m)
			if m.Rule != tt.rule || !strings.HasPrefix(m.Note, tt.note) || strings.Contains(said, "no swept dimension splits") {
				t.Errorf("map %q, note %q, want %q, %q...: %s", m.Rule, m.Note, tt.rule, tt.note, said)
			}
			if len(m.Also) != 1 || m.Also[0].Rule != "every rows -> A" {
				t.Errorf("also %+v, want the items sweep (every rows -> A)", m.Also)
			}
		})
	}
}
