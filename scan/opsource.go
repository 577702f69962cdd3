package scan

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// OpSources returns a campaign source (fuzz.Source) for each name of
// names that is a target of an op package (OpSource), in that order:
// `bitparity run --targets NAME` runs it beside the single-op pairs.
func OpSources(names []string) []*fuzz.Source {
	var out []*fuzz.Source
	for _, n := range names {
		if t, ok := all.Lookup(n); ok {
			out = append(out, OpSource(t))
		}
	}
	return out
}

// OpCheckers are the checkers of cases of op packages' targets, one
// source per op of ops/all.Ops, as fuzz.Check takes them beside a case
// (verdict.Case, corpus.Replay and Recheck): each checks a case on the
// target it names (ops/all.Lookup: a CPU target, a device target of this
// build, or an adapter started with --exec), shrinks and maps it as the
// campaign's OpSource does. `run --case`, `repro` and `corpus recheck`
// replay such a case through them.
func OpCheckers() []target.Target {
	var out []target.Target
	for _, op := range all.Ops {
		name := op.Record().Name
		out = append(out, &fuzz.Source{Name: name, Op: spec.Op(name),
			Check: func(ctx context.Context, c spec.Case) (*spec.Finding, error) {
				t, err := caseTarget(c)
				if err != nil {
					return nil, err
				}
				return opCheck(ctx, t, c)
			},
			Shrink: opShrink,
			Map: func(ctx context.Context, f *spec.Finding) error {
				t, err := caseTarget(f.Case)
				if err != nil {
					return err
				}
				return opMap(ctx, t, f)
			}})
	}
	return out
}

// Checkers are every source a replayed case may need beside the
// registered targets (fuzz.Check takes them): the composite ops'
// (external.Composites: the transformer, the model routes started) and
// the op packages' (OpCheckers). `run --case`, `repro` and `corpus
// recheck` pass them.
func Checkers() []target.Target {
	return append(external.Composites(), OpCheckers()...)
}

// caseTarget is the target case c of an op package's op names (the rest
// of the case is checked where its batch is made, opInput).
func caseTarget(c spec.Case) (ops.Target, error) {
	if len(c.Targets) == 0 {
		return nil, fmt.Errorf("case of %s: no target", c.Op)
	}
	t, ok := all.Lookup(c.Targets[0])
	switch {
	case !ok && strings.HasPrefix(c.Targets[0], "exec:"):
		return nil, fmt.Errorf("target %s is an adapter's: start it with --exec", c.Targets[0])
	case !ok:
		return nil, fmt.Errorf("target %s: no op package has it in this build (see 'bitparity list')", c.Targets[0])
	case t.Op().Record().Name != string(c.Op):
		return nil, fmt.Errorf("case: %s is a target of op %s, not %s", t.Name(), t.Op().Record().Name, c.Op)
	}
	return t, nil
}

// opControlCases is how many cases a drift model's job runs before it
// counts as missed, past the campaign's Duration (fuzz.Job.MinCases).
const opControlCases = 12

// OpSource is target t of an op package as a campaign source: one job,
// named t.Name(), of batch-invariance cases. A case (opCase) is a batch
// of Shape.Rows items, items 0..Rows-1 of draw (Dist, In, Seed) at the
// op's sizes Shape.Dims; Check runs it on t and each item alone
// (ops.BatchInvariance) and finds the rows that differ, in the op's
// words. Its cases draw, by seed, a batch of 1..256 items, one of the
// op's draws and input dtypes, and the op's default sizes or those
// divided by 4 or 8 (a quarter of the cases at the defaults). An invariant
// target's job is invariant; a drift model's is a control that must give
// a mismatch. Shrink takes smaller batches (v - 128, v - 64, ..., v - 1:
// greedy descent to the onset); Map sweeps the batch sizes 1..v + max(v/4,
// 16) of the case's draw with RunOp, whose map and words the finding
// takes.
func OpSource(t ops.Target) *fuzz.Source {
	rec := t.Op().Record()
	job := fuzz.Job{Name: t.Name(), Relation: spec.RelBatchInvariance, Invariant: t.Invariant(),
		Draw: func(seed uint64) (spec.Case, bool) { return opCase(t, seed) }}
	if !t.Invariant() {
		job.Expect, job.MinCases = spec.KindMismatch, opControlCases
	}
	return &fuzz.Source{Name: t.Name(), Op: spec.Op(rec.Name),
		Check:  func(ctx context.Context, c spec.Case) (*spec.Finding, error) { return opCheck(ctx, t, c) },
		Shrink: opShrink,
		Map:    func(ctx context.Context, f *spec.Finding) error { return opMap(ctx, t, f) },
		Jobs:   []fuzz.Job{job}}
}

// opCase draws the case of seed for target t.
func opCase(t ops.Target, seed uint64) (spec.Case, bool) {
	rec := t.Op().Record()
	r := seed
	next := func(n int) int { r = r*6364136223846793005 + 1442695040888963407; return int((r >> 33) % uint64(n)) }
	shift := []int{0, 2, 2, 3}[next(4)]
	dims := map[string]int{}
	for _, d := range rec.Dims {
		dims[d.Name] = max(1, d.Default>>shift)
	}
	if _, err := t.Op().Columns(dims); err != nil {
		for _, d := range rec.Dims {
			dims[d.Name] = d.Default
		}
	}
	c := spec.Case{Version: spec.CaseVersion, Op: spec.Op(rec.Name), Relation: spec.RelBatchInvariance,
		Targets: []string{t.Name()}, Shape: spec.Shape{Rows: 1 + next(256), Dims: dims},
		In: spec.DType(rec.In[next(len(rec.In))].String()), Dist: spec.Dist(rec.Dists[next(len(rec.Dists))]),
		Seed: seed, GenVersion: spec.GeneratorVersion}
	c.Out = c.In
	return c, true
}

// opInput is the batch of case c (ops.CheckCase): items 0..Rows-1 of
// its draw.
func opInput(t ops.Target, c spec.Case) (ops.Input, error) {
	if err := ops.CheckCase(t.Op(), c); err != nil {
		return nil, err
	}
	dt, err := oracle.ParseDType(string(c.In))
	if err != nil {
		return nil, err
	}
	return t.Op().Seeded(ops.Draw{Shape: c.Shape.Dims, DType: dt, Dist: string(c.Dist), Seed: c.Seed}, keys(0, c.Shape.Rows))
}

// opCheck checks case c on t: nil when every row of the batch has the
// bits of its item alone, else a mismatch finding whose Message is the
// op's words, whose A and B are the first differing element (Element) of
// the first differing row alone and in the batch, and whose Repro is the
// scan that maps it.
func opCheck(ctx context.Context, t ops.Target, c spec.Case) (*spec.Finding, error) {
	start := time.Now()
	in, err := opInput(t, c)
	if err != nil {
		return nil, fmt.Errorf("%s case: %w", t.Name(), err)
	}
	alone, err := ops.Alone(ctx, t, in)
	if err != nil {
		return nil, err
	}
	v := c.Shape.Rows
	ch, err := ops.BatchInvariance(ctx, t, in, alone, v)
	if err != nil || len(ch.Rows) == 0 {
		return nil, err
	}
	rec := t.Op().Record()
	f := &spec.Finding{Case: c, Kind: spec.KindMismatch, Relation: c.Relation, TargetA: t.Name(), Row: ch.Rows[0],
		RowsDiffering: len(ch.Rows), Env: spec.HostEnv(), FoundAt: time.Now().UTC(), ToMinimal: spec.Duration(time.Since(start)),
		Message: fmt.Sprintf("a batch of %d %ss against each %s alone (%s, %s %s draw, seed %d): %s", v, rec.Item, rec.Item,
			ops.Shape(c.Shape.Dims), c.In, c.Dist, c.Seed, t.Op().Words(ch.Batch, ch.Want, ch.Got, ch.Rows)),
		Repro: opScanLine(c, v+max(v/4, 16))}
	if a, b, ok := ch.Want.FirstDiff(ch.Rows[0], ch.Got, ch.Rows[0]); ok {
		f.Element, f.Col = a.Where(), a.Index
		f.A, f.B = spec.Value{Hex: a.Hex, Dec: a.Dec}, spec.Value{Hex: b.Hex, Dec: b.Dec}
	}
	f.Signature = spec.Signature(*f)
	return f, nil
}

// opScanLine is the `bitparity scan` command that maps case c over batch
// sizes 1..to: --target NAME, or for an adapter (external.OpTarget) --exec
// with the command line that started it.
func opScanLine(c spec.Case, to int) string {
	var dims []string
	for k, v := range c.Shape.Dims {
		dims = append(dims, fmt.Sprintf("%s=%d", k, v))
	}
	slices.Sort(dims)
	subject := "--target " + c.Targets[0]
	if cl := external.Commands(c.Targets[0]); len(cl) == 1 {
		subject = "--exec " + spec.ShellQuote(cl[0])
	}
	return fmt.Sprintf("bitparity scan %s --to %d --in %s --dists %s --seed %d --shape %s",
		subject, to, c.In, c.Dist, c.Seed, strings.Join(dims, ","))
}

// opShrink is one group of smaller batches of c, the most reducing first:
// v - 128, v - 64, ..., v - 1 (those >= 1).
func opShrink(c spec.Case) [][]spec.Case {
	var g []spec.Case
	for d := 128; d >= 1; d /= 2 {
		if c.Shape.Rows-d >= 1 {
			k := c
			k.Shape.Rows -= d
			k.Shape.Dims = maps.Clone(c.Shape.Dims)
			g = append(g, k)
		}
	}
	return [][]spec.Case{g}
}

// opMap maps the drift of finding f: RunOp over batch sizes 1..v +
// max(v/4, 16) of its case's draw; f takes the map, and the words of the
// first step that differs.
func opMap(ctx context.Context, t ops.Target, f *spec.Finding) error {
	c := f.Case
	s := opMapScan(c)
	to := s.To
	res, err := Run(ctx, s, Options{})
	if err != nil {
		return fmt.Errorf("map %s: %w", t.Name(), err)
	}
	f.DriftMap = res.Map
	f.Repro = opScanLine(c, to)
	if len(res.Diffs) > 0 {
		f.Message += fmt.Sprintf("; over 1..%d %ss: %s, first at %d", to, t.Op().Record().Item, res.Map.Rule, res.Diffs[0].Value)
	}
	f.Signature = spec.Signature(*f)
	return nil
}

// opMapScan is the scan that maps case c of an op package's target: its
// target, draw and sizes over batch sizes 1..v + max(v/4, 16) (at most
// ops.MaxItems), v = c.Shape.Rows.
func opMapScan(c spec.Case) spec.ScanSpec {
	to := min(ops.MaxItems, c.Shape.Rows+max(c.Shape.Rows/4, 16))
	return spec.ScanSpec{Target: c.Targets[0], To: to, In: c.In, Dists: []spec.Dist{c.Dist}, Seed: c.Seed,
		Shape: spec.Shape{Dims: maps.Clone(c.Shape.Dims)}}
}

// SourcesWords names the campaign sources srcs of op packages' targets
// for a run's head line, ", and the op target A (batch_invariance)", or
// "" when there are none.
func SourcesWords(srcs []*fuzz.Source) string {
	var ns []string
	for _, s := range srcs {
		var rels []string
		for _, j := range s.Jobs {
			rels = append(rels, j.Relation)
		}
		ns = append(ns, fmt.Sprintf("%s (%s)", s.Name, strings.Join(rels, ", ")))
	}
	if len(ns) == 0 {
		return ""
	}
	return ", and the op " + words.Plural(int64(len(ns)), "target ", "targets ") + strings.Join(ns, ", ")
}
