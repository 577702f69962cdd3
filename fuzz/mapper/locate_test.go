package mapper

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// A campaign finding of a drift that shows only at some positions of a
// batch (the scan controls of one row and of a second wave, a kernel
// wrong at odd positions from 100 rows) gets a map
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
		// the relation's own sweep splits here (its panel holds odd
		// positions): no prefix sweep, no note
		{"test-odd-positions-100", 120, 0, "rows <= 99 -> A, rows >= 100 -> B", ""},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance,
				Targets: []string{tt.target}, Shape: spec.Shape{Rows: tt.rows, Hidden: 64}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6,
				Dist: spec.DistNormal, Seed: tt.seed, Rel: spec.RelParams{Batch: 1}}
			var given []target.Target
			if tt.target == "test-odd-positions-100" {
				given = append(given, oddPositions{})
			}
			f, err := relate.Check(context.Background(), c, given...)
			if err != nil || f == nil {
				t.Fatalf("no finding: %v", err)
			}
			m, err := Map(context.Background(), f, given...)
			if err != nil {
				t.Fatal(err)
			}
			said := words.Drift(m)
			if m.Rule != tt.rule || !strings.HasPrefix(m.Note, tt.note) || strings.Contains(said, "no swept dimension splits") {
				t.Errorf("map %q, note %q, want %q, %q...: %s", m.Rule, m.Note, tt.rule, tt.note, said)
			}
			if located := strings.HasPrefix(m.At, "prefixes"); located != (tt.note != "") ||
				located && (len(m.Also) != 1 || m.Also[0].Rule != "every rows -> A") {
				t.Errorf("at %q, also %+v: want the prefixes first, then the items sweep (every rows -> A), where a note is", m.At, m.Also)
			}
		})
	}
}

// oddPositions is a test-only rmsnorm target: the oracle, except that in
// batches of 100 rows or more it flips the lowest bit of the first output
// value of every row at an odd position.
type oddPositions struct{}

func (oddPositions) Info() target.Info {
	return target.Info{Name: "test-odd-positions-100", Op: spec.OpRMSNorm, Device: "cpu",
		Schedule: target.OracleRMSNormSchedule.String(), Expect: []string{spec.RelBatchInvariance}}
}

func (oddPositions) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	o, err := target.RunOracle(b, target.OracleRMSNormSchedule, rows)
	if err != nil || b.Rows() < 100 {
		return o, err
	}
	for i, r := range o.Rows {
		if r%2 == 1 {
			o.Values[i*o.Cols] = math.Float32frombits(math.Float32bits(o.Values[i*o.Cols]) ^ 0x10000)
		}
	}
	return o, nil
}
