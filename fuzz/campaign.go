package fuzz

import (
	"context"
	"errors"
	"math/rand"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/fuzz/internal/taps"
	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Campaign runs every pair (Pairs) and every job of its Sources for a
// duration: it draws cases with gen.Case (a source's job with its own
// Draw), runs Check, and shrinks and maps every finding (Minimize). The
// zero value of every field is valid: 60 s, seed 0, every target and
// relation, no case limit, no progress calls, defaultWorkers workers, no
// composite source.
type Campaign struct {
	Duration time.Duration
	Seed     uint64
	// Targets and Relations filter the pairs: a pair runs when one of its
	// targets is listed (or the list is empty) and its relation is listed
	// (or the list is empty). A source's jobs run when its Name is listed
	// (or the list is empty).
	Targets   []string
	Relations []string
	// MaxCases stops the campaign after that many cases (0: no limit).
	MaxCases int64
	// Progress, when set, is called about every ProgressEvery (default
	// 1 s) and once at the end, from one goroutine at a time.
	Progress      func(Stats)
	ProgressEvery time.Duration
	// Workers is the number of cases run at once (0: defaultWorkers, one
	// per GOMAXPROCS: the oracle spreads a case's rows over GOMAXPROCS
	// goroutines too, but most cases are small and leave CPUs idle
	// between their parallel parts, so on 2 cores 2 workers run about 1.4
	// times the cases of 1). One more goroutine shrinks and maps findings
	// meanwhile.
	Workers int
	// ShrinkBudget bounds the time spent shrinking one finding (0: 10 s;
	// 3 s for findings still queued at the deadline; the drift map has
	// its own 30 s, MinimizeOptions.MapBudget). NoShrink reports findings
	// as first found (a source's finding mapped by its Source.Map).
	ShrinkBudget time.Duration
	NoShrink     bool
	// OnFound, when set, is called with each finding as first found,
	// before it waits to be shrunk, from the worker that found it (calls
	// may overlap). OnFinding, when set, is called with each finding once
	// it is shrunk and mapped, one call at a time; its Original (or, when
	// shrinking kept the case, its Case) is the case OnFound saw.
	OnFound   func(spec.Finding)
	OnFinding func(spec.Finding)
	// Grace bounds the shrinking left when Duration is over or ctx ends
	// (an interrupt): findings still being shrunk or queued get Grace in
	// all, counted from then, and are reported as far as they got (0: 3 s,
	// ShrinkGrace).
	Grace time.Duration
	// NoTaps compares outputs only (taps.Off): drift that changes only
	// fp32 intermediates is then found once it flips an output bit.
	NoTaps bool
	// Shard, when set, runs only the draws of each pair's case stream that
	// it owns (fuzz/shard.go); MaxCases then counts this shard's cases.
	// A source's jobs are not sharded.
	Shard spec.Shard
	// Reshape, when set, rewrites the inner sizes and dtypes of every
	// drawn case before its cost is checked (a model profile:
	// profile.Profile.Apply); reshape.go. MaxTokens, with Reshape, is the
	// model's largest batch: batch dimensions are then drawn over
	// 1..MaxTokens (gen.Spread) within the work the CPU must do
	// (cpuBound); 0 keeps gen's batch draw under casecost.Small.
	Reshape   func(r *rand.Rand, c *spec.Case)
	MaxTokens int
	// ShrinkPastReshape lets the shrinking of a finding reduce the inner
	// sizes Reshape set; by default it holds them (shrink.Options.
	// HoldInner) and shrinks only batch and sequence dimensions, so the
	// finding is stated at the model's shape.
	ShrinkPastReshape bool
	// OnDraw, when set, is called with every case the campaign draws for
	// its shard, before it runs, from the worker that drew it (calls may
	// overlap): to measure what a campaign draws.
	OnDraw func(spec.Case)
	// Sources are composite ops' case sources (the end-to-end
	// transformer, a model route): each Job of each runs as a pair of its
	// own beside Pairs, drawn by the job, checked, shrunk and mapped by
	// its source (source.go), in the source's time share (Source.Share)
	// when it has one. Targets selects a source by its Name; Relations
	// filter its jobs too.
	Sources []*Source
	// Env is the environment fingerprint the result and every finding
	// record (zero: spec.HostEnv(), which has no device fields; the
	// command passes its whole fingerprint, the GPU's in a cuda build).
	Env spec.Env
}

// Stats is a campaign's progress.
type Stats struct {
	Elapsed  time.Duration
	Cases    int64
	Findings int
	// InvariantCases counts the cases run on pairs whose targets are all
	// invariant (the negative controls' counterpart: they must give no
	// finding).
	InvariantCases int64
	// Skipped counts the cases a target declined (ErrUnsupported); they
	// are not in Cases.
	Skipped int64
	// Pairs is the number of pairs still generating cases, of Total.
	Pairs, Total int
}

// CasesPerSecond is Cases over Elapsed.
func (s Stats) CasesPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Cases) / s.Elapsed.Seconds()
}

// pairState is one pair's share of a campaign.
//
// The scheduler reads spent, busy and retired on every case (runner.pick)
// and record updates them without taking the pair's lock; mu serializes
// the pair's draws.
type pairState struct {
	target.Pair
	invariant bool
	src       *Source // a source's job (Pair.Targets is then its name)
	job       *Job
	jobIndex  int // of job in src.Jobs (its seeds: drawJob)
	group     int // of its time share (share.go)

	spent   atomic.Int64 // wall time of its cases (ns), for fair scheduling
	busy    atomic.Int64 // cases drawn and not yet recorded
	cases   atomic.Int64
	retired atomic.Bool  // a finding was made, or 8 failures in a row: no more cases
	errs    atomic.Int64 // failures in a row

	mu       sync.Mutex
	stream   stream // its cases (with Reshape, only stream.rng)
	drawn    int64  // draws of its stream so far, owned by the shard or not
	cpuBound int64  // the casecost.Of bound of its cases at a profile (cpuBound)

	found atomic.Int64    // findings kept (a source's job)
	kept  map[string]bool // kind and site of each finding kept, under the runner's mu (Job.Repeat)
}

// ErrNoPairs is returned by Run when the filters leave nothing to run.
var ErrNoPairs = errors.New("no target and relation pair to run (bitparity list shows them)")

// Run runs the campaign until Duration has passed, MaxCases cases have run,
// every pair has a finding, or ctx ends, and then on while a source's
// control is owed cases (Job.MinCases); it returns what it found. A target
// that fails on a case (an error, not a finding) counts against that pair;
// a pair whose cases keep failing (8 in a row) stops and Run returns the
// last error with the result.
//
// Workers draw cases from the pair with the least time so far (next) in
// the group furthest behind its time share (Source.Share, share.go),
// Check them and hand the first finding of each pair (each new kind and
// site of a Job.Repeat) to one goroutine that shrinks and maps it
// (minimizeAll) while the workers go on; findings still queued at the
// deadline get lateShrinkBudget each.
func (c *Campaign) Run(ctx context.Context) (*spec.Result, error) {
	pairs, err := c.pairs()
	if err != nil {
		return nil, err
	}
	if c.NoTaps {
		ctx = taps.Off(ctx)
	}
	gs, err := groups(pairs)
	if err != nil {
		return nil, err
	}
	r := newRunner(c, pairs, gs)
	// workCtx ends when the workers are done (or ctx ends): the shrinking
	// grace counts from then.
	workCtx, endWork := context.WithCancel(ctx)
	defer endWork()
	runCtx, cancel := context.WithDeadline(workCtx, r.deadline)
	defer cancel()

	stopProgress := r.reportProgress()
	// Findings are shrunk under graceCtx: Run returns by Duration + Grace
	// (plus the cases owed to controls).
	graceCtx, stopGrace := c.graceContext(workCtx)
	defer stopGrace()
	shrunk := make(chan struct{})
	go func() {
		defer close(shrunk)
		r.minimizeAll(graceCtx)
	}()
	r.workAll(runCtx, workCtx)
	if r.owing() {
		r.overtime.Store(true)
		r.workAll(workCtx, workCtx)
	}
	// Workers done before the deadline (every pair finished, MaxCases)
	// leave the shrinking the time up to it: the grace counts from the
	// deadline or an interrupt, not from the workers' early end.
	close(r.found)
	select {
	case <-shrunk:
	case <-runCtx.Done():
	}
	endWork()
	<-shrunk
	stopProgress()
	return r.result()
}

// ShrinkGrace returns the campaign's Grace, or its default when zero
// (lateShrinkBudget, 3 s).
func (c *Campaign) ShrinkGrace() time.Duration {
	if c.Grace <= 0 {
		return lateShrinkBudget
	}
	return c.Grace
}

// graceContext returns the context findings are shrunk under: it ends
// ShrinkGrace after ctx ends, so an interrupted campaign still shrinks
// what it found, for a bounded time.
func (c *Campaign) graceContext(ctx context.Context) (context.Context, context.CancelFunc) {
	grace := c.ShrinkGrace()
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var timer *time.Timer
	var tmu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		tmu.Lock()
		timer = time.AfterFunc(grace, cancel)
		tmu.Unlock()
	})
	return gctx, func() {
		stop()
		tmu.Lock()
		if timer != nil {
			timer.Stop()
		}
		tmu.Unlock()
		cancel()
	}
}

// minimizeOptions are the options of Minimize for the campaign's findings:
// with Reshape, the shrink holds the inner sizes unless ShrinkPastReshape.
func (c *Campaign) minimizeOptions() MinimizeOptions {
	return MinimizeOptions{Shrink: shrink.Options{HoldInner: c.Reshape != nil && !c.ShrinkPastReshape}}
}

// minimizeOrAbandon shrinks f under sctx (minimizeInPlace), but keeps f as
// found when stop ends first: Minimize's drift map runs under its own
// budget, which an interrupted campaign does not wait for (the abandoned
// minimization ends within that budget).
func minimizeOrAbandon(stop, sctx context.Context, f *spec.Finding, opts MinimizeOptions) {
	g := *f
	done := make(chan struct{})
	go func() {
		minimizeInPlace(sctx, &g, opts)
		close(done)
	}()
	select {
	case <-done:
		*f = g
	case <-stop.Done():
		f.Message += " (not minimized: the campaign's time was up)"
	}
}

// pairs applies the filters to Pairs.
func (c *Campaign) pairs() ([]*pairState, error) {
	for _, name := range c.Targets {
		if c.source(name) != nil {
			continue
		}
		if _, err := target.Lookup(name); err != nil {
			return nil, err
		}
	}
	for _, name := range c.Relations {
		if _, err := relate.ByName(name); err != nil {
			return nil, err
		}
	}
	var out []*pairState
	for i, p := range relate.PairsNaming(c.Targets) {
		if len(c.Relations) > 0 && !slices.Contains(c.Relations, p.Relation) {
			continue
		}
		if len(c.Targets) > 0 {
			hit := false
			for _, t := range p.Targets {
				hit = hit || slices.Contains(c.Targets, t)
			}
			if !hit {
				continue
			}
		}
		inv := true
		for _, name := range p.Targets {
			t, err := target.Lookup(name)
			if err != nil {
				return nil, err
			}
			inv = inv && t.Info().Invariant
		}
		seed := int64(inputs.Splitmix(c.Seed ^ inputs.Splitmix(uint64(i)+1)))
		out = append(out, &pairState{Pair: p, stream: stream{rng: rand.New(rand.NewSource(seed))}, invariant: inv,
			cpuBound: cpuBound(p)})
	}
	for _, src := range c.Sources {
		if len(c.Targets) > 0 && !slices.Contains(c.Targets, src.Name) {
			continue
		}
		for j := range src.Jobs {
			job := &src.Jobs[j]
			if len(c.Relations) > 0 && !slices.Contains(c.Relations, job.Relation) {
				continue
			}
			out = append(out, &pairState{Pair: target.Pair{Op: src.Op, Relation: job.Relation, Targets: []string{job.Name},
				Expect: job.Expect != ""}, src: src, job: job, jobIndex: j, invariant: job.Invariant, kept: map[string]bool{}})
		}
	}
	if len(out) == 0 {
		return nil, ErrNoPairs
	}
	return out, nil
}

// CountPairs is the number of single-op pairs of target and relation the
// filters select (0 when a filter names no target or relation of this
// build); a source's jobs are not counted.
func (c *Campaign) CountPairs() int {
	ps, err := c.pairs()
	n := 0
	for _, p := range ps {
		if err == nil && p.src == nil {
			n++
		}
	}
	return n
}

// source returns the source named name, or nil.
func (c *Campaign) source(name string) *Source {
	for _, s := range c.Sources {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// targetStats counts cases and findings per target, and per job name for
// the jobs of sources.
func targetStats(pairs []*pairState, findings []spec.Finding) []spec.TargetStats {
	by := map[string]*spec.TargetStats{}
	var names []string
	var jobs []spec.TargetStats
	jobAt := map[string]int{}
	for _, p := range pairs {
		if p.job != nil {
			i, ok := jobAt[p.job.Name]
			if !ok {
				i = len(jobs)
				jobAt[p.job.Name] = i
				jobs = append(jobs, spec.TargetStats{Target: p.job.Name, Invariant: p.job.Invariant, Op: p.src.Op})
			}
			s := &jobs[i]
			s.Cases += p.cases.Load()
			s.Findings += int(p.found.Load())
			if !slices.Contains(s.Relations, p.Relation) {
				s.Relations = append(s.Relations, p.Relation)
			}
			continue
		}
		for _, name := range p.Targets {
			s, ok := by[name]
			if !ok {
				t, err := target.Lookup(name)
				if err != nil {
					continue
				}
				s = &spec.TargetStats{Target: name, Invariant: t.Info().Invariant, Op: t.Info().Op}
				by[name] = s
				names = append(names, name)
			}
			s.Cases += p.cases.Load()
			if !slices.Contains(s.Relations, p.Relation) {
				s.Relations = append(s.Relations, p.Relation)
			}
		}
	}
	// A finding counts for the drift models it names; only a finding that
	// names invariant targets alone counts for them.
	countFindings(by, findings)
	sort.Strings(names)
	out := make([]spec.TargetStats, 0, len(names)+len(jobs))
	for _, n := range names {
		out = append(out, *by[n])
	}
	return append(out, jobs...)
}

// countFindings adds each finding to the Findings count of the targets it
// names: the drift models among them, or, when it names invariant targets
// only, those (a target named twice counts once).
func countFindings(by map[string]*spec.TargetStats, findings []spec.Finding) {
	for _, f := range findings {
		var drift, inv []*spec.TargetStats
		for i, name := range []string{f.TargetA, f.TargetB} {
			if s, ok := by[name]; ok && (i == 0 || name != f.TargetA) {
				if s.Invariant {
					inv = append(inv, s)
				} else {
					drift = append(drift, s)
				}
			}
		}
		if len(drift) == 0 {
			drift = inv
		}
		for _, s := range drift {
			s.Findings++
		}
	}
}
