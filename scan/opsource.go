package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bitparity/bitparity/corpus"
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

// OpCheckers are OpSources(names) as the targets fuzz.Check takes beside
// a case (verdict.Case, corpus.Replay): a replay of a case of an op
// package's target (`run --case`, `repro`) goes to its source.
func OpCheckers(names []string) []target.Target {
	var out []target.Target
	for _, s := range OpSources(names) {
		out = append(out, s)
	}
	return out
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

// opInput is the batch of case c: items 0..Rows-1 of its draw.
func opInput(t ops.Target, c spec.Case) (ops.Input, error) {
	dt, err := oracle.ParseDType(string(c.In))
	if err != nil {
		return nil, err
	}
	if c.Shape.Rows < 1 || c.Shape.Rows > MaxOpItems {
		return nil, fmt.Errorf("%s case: %d items, want 1..%d", t.Name(), c.Shape.Rows, MaxOpItems)
	}
	if _, err := t.Op().Columns(c.Shape.Dims); err != nil {
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
	if c.Relation != spec.RelBatchInvariance {
		return nil, fmt.Errorf("%s case: relation %q, want %s", t.Name(), c.Relation, spec.RelBatchInvariance)
	}
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
	if rec := res.Record(); isDrift(rec) {
		opMaps.Store(opMapKey(s), rec)
	}
	f.DriftMap = res.Map
	f.Repro = opScanLine(c, to)
	if len(res.Diffs) > 0 {
		f.Message += fmt.Sprintf("; over 1..%d %ss: %s, first at %d", to, t.Op().Record().Item, res.Map.Rule, res.Diffs[0].Value)
	}
	f.Signature = spec.Signature(*f)
	return nil
}

// opMaps holds the drift each opMap found, by its scan (opMapKey), until
// StoreOpFinding stores it: a run keeps the scan its finding was mapped
// with instead of running it again.
var opMaps sync.Map

// opMapKey names scan s in opMaps.
func opMapKey(s spec.ScanSpec) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// isDrift reports whether scan result r shows a drift (neither a
// certificate nor a path scan's agreement).
func isDrift(r spec.ScanResult) bool {
	return r.Certificate == nil && r.Verdict != spec.ScanAgree
}

// opMapScan is the scan that maps case c of an op package's target: its
// target, draw and sizes over batch sizes 1..v + max(v/4, 16) (at most
// MaxOpItems), v = c.Shape.Rows.
func opMapScan(c spec.Case) spec.ScanSpec {
	to := min(MaxOpItems, c.Shape.Rows+max(c.Shape.Rows/4, 16))
	return spec.ScanSpec{Target: c.Targets[0], To: to, In: c.In, Dists: []spec.Dist{c.Dist}, Seed: c.Seed,
		Shape: spec.Shape{Dims: maps.Clone(c.Shape.Dims)}}
}

// OpFindingStore is StoreOpFinding in env as a run's recorder calls it
// (verdict.RecorderOptions.StoreOp), outliving the run's context: a
// finding is stored even when the run is interrupted.
func OpFindingStore(env spec.Env) func(d *corpus.Dir, f spec.Finding) (string, error) {
	return func(d *corpus.Dir, f spec.Finding) (string, error) {
		return StoreOpFinding(context.Background(), d, f, env)
	}
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

// StoreOpFinding keeps finding f of an op package's target (whose case the
// corpus has no case file for, corpus.Keeps) in the corpus folder d as
// the drift of the scan that maps it (the scan its Repro names, as opMap
// ran it when it mapped f, else run here; Store:
// with the adapter of an --exec target, so corpus recheck reruns it). It
// returns the words for the run's log: "; scan drift PATH", or why
// nothing was stored when the scan here does not show the drift (a
// certificate is never stored for a finding). err is a failed scan or
// write.
func StoreOpFinding(ctx context.Context, d *corpus.Dir, f spec.Finding, env spec.Env) (string, error) {
	s := opMapScan(f.Case)
	var rec spec.ScanResult
	if m, ok := opMaps.LoadAndDelete(opMapKey(s)); ok {
		rec = m.(spec.ScanResult)
	} else {
		res, err := Run(ctx, s, Options{Env: env})
		if err != nil {
			return "", fmt.Errorf("scan of the finding: %w", err)
		}
		rec = res.Record()
	}
	if !isDrift(rec) {
		return fmt.Sprintf(" (not stored: its scan over 1..%d did not show the drift here)", s.To), nil
	}
	if err := Store(io.Discard, d, &rec, env, nil); err != nil {
		return "", err
	}
	return "; scan drift " + rec.DriftFile, nil
}
