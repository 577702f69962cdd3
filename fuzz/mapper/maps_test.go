package mapper

import (
	"context"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/internal/golden"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

var update = flag.Bool("update", false, "rewrite testdata/maps.golden (the drift maps of the planted controls)")

// Planted targets: CPU rmsnorm kernels whose drift is known exactly, one
// for each way a drift map used to mislead (issue 32). Their schedules
// differ only in the order of the fp32 sum of squares, which the taps show.
var (
	plantA = oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 32, Vec: 4,
		Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}, Order: oracle.ScaleThenWeight}
	plantB = oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 64, Vec: 8,
		Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}, Order: oracle.ScaleThenWeight}
	plantC = oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 256, Vec: 1,
		Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}, Order: oracle.ScaleThenWeight}
)

func plantedInfo(name string) target.Info {
	return target.Info{Name: name, Op: spec.OpRMSNorm, Device: "cpu", Schedule: plantA.String()}
}

// plantedPastSize follows one periodic rule below 384 rows and another
// schedule from 384 rows on: the truth a map swept only up to 320 misses.
func plantedPastSize() target.Target {
	return target.Scheduled(plantedInfo("plant-past-size"), func(b *target.Batch) oracle.Schedule {
		switch r := b.Rows(); {
		case r >= 384:
			return plantC
		case r%16 == 0 || r%16 >= 9:
			return plantB
		}
		return plantA
	})
}

// plantedOnset switches its schedule at 132 rows, between values a sweep
// samples (129 and 160).
func plantedOnset() target.Target {
	return target.Scheduled(plantedInfo("plant-onset-132"), func(b *target.Batch) oracle.Schedule {
		if b.Rows() >= 132 {
			return plantB
		}
		return plantA
	})
}

// positional computes rows at positions p % 8 == 7 of a batch of 256 rows
// or more with another schedule: the drift depends on the batch size and
// the position together.
type positional struct{}

func (positional) Info() target.Info { return plantedInfo("plant-position") }

func (positional) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	o, err := target.RunOracle(b, plantA, rows)
	if err != nil || b.Rows() < 256 {
		return o, err
	}
	alt, err := target.RunOracle(b, plantB, rows)
	if err != nil {
		return nil, err
	}
	for i, r := range o.Rows {
		if r%8 == 7 {
			copy(o.Values[i*o.Cols:(i+1)*o.Cols], alt.Values[i*o.Cols:(i+1)*o.Cols])
			copy(o.Taps[i*o.TapCols:(i+1)*o.TapCols], alt.Taps[i*o.TapCols:(i+1)*o.TapCols])
		}
	}
	return o, nil
}

// nondeterministic models a reduction that combines partial sums in the
// order they arrive (atomics) below 16 rows: the last bits of the fp32 sum
// of squares change from call to call (call n moves it by n % 67 ulps, and
// no sweep runs 67 batches for one value, so two runs never agree).
type nondeterministic struct{ calls atomic.Int64 }

func (*nondeterministic) Info() target.Info { return plantedInfo("plant-nondeterministic") }

func (t *nondeterministic) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	o, err := target.RunOracle(b, plantA, rows)
	if err != nil || b.Rows() >= 16 {
		return o, err
	}
	n := t.calls.Add(1) % 67
	for i := 0; i < len(o.Taps); i += o.TapCols {
		for k := int64(0); k < n; k++ {
			o.Taps[i] = math.Nextafter32(o.Taps[i], float32(math.Inf(1)))
		}
	}
	return o, nil
}

// crashing faults on batches of a multiple of 89 rows.
type crashing struct{}

func (crashing) Info() target.Info { return plantedInfo("plant-crash-89") }

func (crashing) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if b.Rows()%89 == 0 {
		return nil, fmt.Errorf("illegal memory access at %d rows: %w", b.Rows(), target.ErrTargetCrashed)
	}
	return target.RunOracle(b, plantA, rows)
}

// plantedCase is a case of rmsnorm on one planted target.
func plantedCase(rel string, t target.Target, rows int, p spec.RelParams) spec.Case {
	return spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
		Relation: rel, Targets: []string{t.Info().Name}, Shape: spec.Shape{Rows: rows, Hidden: 256},
		In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistNormal, Seed: 11, Rel: p}
}

// Every printed map of a planted target equals the planted truth, states
// the range it swept, and never says "invariant". The printed maps are in
// testdata/maps.golden (go test ./fuzz/mapper -run TestPlantedMaps -update).
func TestPlantedMaps(t *testing.T) {
	ctx := context.Background()
	nd := &nondeterministic{}
	past := plantedPastSize()
	grown := plantedCase(spec.RelBatchInvariance, past, 512, spec.RelParams{})
	tile := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpAttnPrefill,
		Relation: spec.RelPathParity, Targets: []string{"drift-attn-tile48", target.OracleName(spec.OpAttnPrefill)},
		Shape: spec.Shape{Seqs: 1, SeqLen: 49, Heads: 4, KVHeads: 2, HeadDim: 16},
		In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 5}
	tests := []struct {
		name    string
		f       spec.Finding
		ts      []target.Target
		dim     string
		from    int
		to      int
		rule    string
		also    string // the rule of the second dimension swept
		classes int
	}{
		{name: "a rule that changes past a size",
			f:  spec.Finding{Kind: spec.KindMismatch, Case: plantedCase(spec.RelBatchInvariance, past, 9, spec.RelParams{}), Original: &grown},
			ts: []target.Target{past}, dim: "rows", from: 1, to: 512,
			rule: "rows <= 383: rows % 16 in {0, 9, 10, 11, 12, 13, 14, 15} -> B, otherwise -> A; rows >= 384 -> C"},
		{name: "an onset between sampled values",
			f:  spec.Finding{Kind: spec.KindMismatch, Case: plantedCase(spec.RelOracleParity, plantedOnset(), 300, spec.RelParams{})},
			ts: []target.Target{plantedOnset()}, dim: "rows", from: 1, to: 576,
			rule: "rows <= 131 -> A, rows >= 132 -> B"},
		{name: "a padded size past a threshold",
			f:  spec.Finding{Kind: spec.KindMismatch, Case: plantedCase(spec.RelPadding, plantedOnset(), 100, spec.RelParams{Pad: 140, Filler: "zeros"})},
			ts: []target.Target{plantedOnset()}, dim: "rows", from: 1, to: 320,
			rule: "rows <= 131 -> A, rows >= 132 -> B", also: "pad <= 131 -> A, pad >= 132 -> B"},
		{name: "a position-dependent drift above a batch size",
			f:  spec.Finding{Kind: spec.KindMismatch, Case: plantedCase(spec.RelBatchInvariance, positional{}, 1, spec.RelParams{Batch: 300, Position: 7})},
			ts: []target.Target{positional{}}, dim: "rows", from: 1, to: 576,
			rule: "rows <= 255 -> A, rows >= 256 -> B", also: "position % 8 == 7 -> B, otherwise -> A"},
		{name: "a nondeterministic reduction below a size (determinism)",
			f:  spec.Finding{Kind: spec.KindMismatch, Case: plantedCase(spec.RelDeterminism, nd, 4, spec.RelParams{})},
			ts: []target.Target{nd}, dim: "rows", from: 1, to: 320,
			rule: "rows <= 15 -> nondeterministic, rows >= 16 -> deterministic"},
		{name: "a nondeterministic reduction below a size (batch invariance)",
			f:  spec.Finding{Kind: spec.KindMismatch, Case: plantedCase(spec.RelBatchInvariance, nd, 4, spec.RelParams{})},
			ts: []target.Target{nd}, dim: "rows", from: 1, to: 320,
			rule: "rows <= 15 -> nondeterministic, rows >= 16 -> A"},
		{name: "two paths that agree up to a tile edge",
			f:   spec.Finding{Kind: spec.KindMismatch, Case: tile},
			dim: "kv", from: 1, to: 100,
			rule: "kv <= 48 -> agree, kv >= 49 -> differ"},
		{name: "a crash on a residue class",
			f:  spec.Finding{Kind: spec.KindCrash, Case: plantedCase(spec.RelBatchInvariance, crashing{}, 89, spec.RelParams{})},
			ts: []target.Target{crashing{}}, dim: "rows", from: 1, to: 320,
			rule: "rows % 89 == 0 -> crash, otherwise -> runs"},
	}
	var printed strings.Builder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			f.Relation = f.Case.Relation
			m, err := Map(ctx, &f, tt.ts...)
			if err != nil {
				t.Fatal(err)
			}
			if m.Dim != tt.dim || m.Rule != tt.rule || m.From != tt.from || m.To != tt.to {
				t.Errorf("map over %s %d..%d: %q, want over %s %d..%d: %q", m.Dim, m.From, m.To, m.Rule, tt.dim, tt.from, tt.to, tt.rule)
			}
			if tt.also != "" && (len(m.Also) != 1 || m.Also[0].Rule != tt.also) {
				t.Errorf("also %+v, want one map with rule %q", m.Also, tt.also)
			}
			if m.Runs < 2 || m.Draws != 1+mapDraws {
				t.Errorf("%d runs a value over %d draws, want at least 2 over %d", m.Runs, m.Draws, 1+mapDraws)
			}
			said := words.Drift(m)
			if strings.Contains(said, "invariant") || !strings.Contains(said, fmt.Sprintf("over %s %d..%d", tt.dim, tt.from, tt.to)) ||
				!strings.Contains(said, fmt.Sprintf("not swept above %d", tt.to)) {
				t.Errorf("words: %s", said)
			}
			fmt.Fprintf(&printed, "%s: %s\n", tt.name, said)
		})
	}
	golden.Check(t, filepath.Join("testdata", "maps.golden"), []byte(printed.String()), *update)
}

// A finding where no swept dimension splits says so, with each range,
// and that the prefixes of its batch did not locate an onset either
// (locate.go: a target that never drifts, the finding made up).
func TestMapNoDimensionSplits(t *testing.T) {
	c := plantedCase(spec.RelBatchInvariance, target.Scheduled(plantedInfo("plant-fixed"), func(*target.Batch) oracle.Schedule { return plantA }),
		1, spec.RelParams{Batch: 8, Position: 3})
	f := spec.Finding{Kind: spec.KindMismatch, Case: c, Relation: c.Relation}
	fixed := target.Scheduled(plantedInfo("plant-fixed"), func(*target.Batch) oracle.Schedule { return plantA })
	m, err := Map(context.Background(), &f, fixed)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != driftmap.Uniform || len(m.Also) != 2 || m.Also[0].Dim != "position" || m.Also[0].Kind != driftmap.Uniform ||
		m.Also[1].Kind != driftmap.Uniform {
		t.Fatalf("map %s %q also %+v: want uniform over rows, then position, then the prefixes", m.Kind, m.Rule, m.Also)
	}
	said := words.Drift(m)
	if want := "no swept dimension splits: over rows 1..320"; !strings.HasPrefix(said, want) || !strings.Contains(said, "also over position 0..7 at rows=8 (every value") ||
		!strings.Contains(said, "also over rows 1..8 at prefixes of the case's batch") || !strings.Contains(said, "the onset was not located") {
		t.Errorf("words: %s", said)
	}
}
