package fuzz

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// runner is one Run of a campaign: the pairs, the counters the workers
// share, and the findings.
type runner struct {
	c        *Campaign
	pairs    []*pairState
	workers  int
	shrink   time.Duration // budget of one finding's shrinking
	start    time.Time
	deadline time.Time
	found    chan found  // first finding of each pair, to minimizeAll
	overtime atomic.Bool // past the deadline: only controls owed cases run (owes)
	groups   []group     // the pairs' time shares (share.go)

	mu       sync.Mutex
	cases    int64
	invCases int64
	skipped  int64 // cases a target declined (ErrUnsupported)
	findings []spec.Finding
	fatal    error
}

// defaultWorkers is the number of workers of a campaign whose Workers is
// 0: GOMAXPROCS, so that every CPU checks cases. A GPU campaign gains
// nothing from more: on the H200 host (16 CPUs) a 60 s campaign over every
// cuda target checked 747,836 cases on invariant targets with 16 workers
// and 722,733 with 32 (docs/performance.md, fifth session).
func defaultWorkers() int { return max(1, runtime.GOMAXPROCS(0)) }

// newRunner applies the defaults of c's zero fields: 60 s, defaultWorkers
// workers, 10 s of shrinking per finding.
func newRunner(c *Campaign, pairs []*pairState, groups []group) *runner {
	r := &runner{c: c, pairs: pairs, groups: groups, workers: c.Workers, shrink: c.ShrinkBudget, start: time.Now(),
		found: make(chan found, 1024)}
	dur := c.Duration
	if dur <= 0 {
		dur = 60 * time.Second
	}
	r.deadline = r.start.Add(dur)
	if r.workers <= 0 {
		r.workers = defaultWorkers()
	}
	if r.shrink <= 0 {
		r.shrink = 10 * time.Second
	}
	return r
}

// stats is the campaign's progress now.
func (r *runner) stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Stats{Elapsed: time.Since(r.start), Cases: r.cases, InvariantCases: r.invCases, Skipped: r.skipped,
		Findings: len(r.findings), Total: len(r.pairs)}
	for _, p := range r.pairs {
		if !p.retired.Load() {
			s.Pairs++
		}
	}
	return s
}

// reportProgress calls Progress about every ProgressEvery from one
// goroutine; the returned stop ends it and makes the last call, so
// Progress is never called twice at once.
func (r *runner) reportProgress() (stop func()) {
	if r.c.Progress == nil {
		return func() {}
	}
	every := r.c.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				r.c.Progress(r.stats())
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		r.c.Progress(r.stats())
	}
}

// found is a finding on its way to minimizeAll, with the targets that
// check its case again (its source, for a source's job).
type found struct {
	f *spec.Finding
	p *pairState
}

// targets are the targets Check and Minimize take for the pair's cases:
// its source, for a source's job, else none (the registered ones).
func (p *pairState) targets() []target.Target {
	if p.src == nil {
		return nil
	}
	return []target.Target{p.src}
}

// judge sets f.Expected for a finding of a source's job (Job.Expected, with
// the site its case planted); Check decides it for the other pairs.
func (p *pairState) judge(f *spec.Finding) {
	if p.job == nil {
		return
	}
	var planted *spec.Site
	if p.src.Planted != nil {
		planted = p.src.Planted(f.Case)
	}
	f.Expected = p.job.Expected(f, planted)
}

// workAll runs the workers until ctx ends or no pair is left to pick; a
// source's case runs under jobCtx, which the deadline does not end (a
// control's case in flight then still counts; Job.MinCases).
func (r *runner) workAll(ctx, jobCtx context.Context) {
	var wg sync.WaitGroup
	for i := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(target.WithWorker(ctx, i), target.WithWorker(jobCtx, i))
		}()
	}
	wg.Wait()
}

// owes reports whether pair p is a source's control that has not given
// its finding and has had fewer than its Job.MinCases cases.
func (p *pairState) owes() bool {
	return p.job != nil && p.job.Expect != "" && p.found.Load() == 0 && !p.retired.Load() &&
		p.cases.Load() < p.job.MinCases
}

// owing reports whether some pair owes cases (owes).
func (r *runner) owing() bool {
	for _, p := range r.pairs {
		if p.owes() {
			return true
		}
	}
	return false
}

// next picks the live pair that has had the least time (fair share, pick)
// and draws its next case, or returns nil when none is left. Pairs draw
// under their own locks, so workers of different pairs draw at once.
func (r *runner) next() (*pairState, spec.Case) {
	p := r.pick()
	if p == nil {
		return nil, spec.Case{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.job != nil {
		return p, r.drawJob(p)
	}
	k := r.c.draw(p)
	k.Targets = append([]string(nil), p.Targets...)
	return p, k
}

// drawJob draws the next case of a source's job: the job's case of the
// next seed of its stream (Job.Draw) that it does not skip (a job that
// skips 1000 seeds in a row gets the last of them).
func (r *runner) drawJob(p *pairState) spec.Case {
	var k spec.Case
	jobs := uint64(len(p.src.Jobs))
	for range 1000 {
		seed := inputs.Splitmix(r.c.Seed ^ inputs.Splitmix(uint64(p.jobIndex)+jobs*uint64(p.drawn)))
		p.drawn++
		var ok bool
		if k, ok = p.job.Draw(seed); ok {
			break
		}
	}
	return k
}

// pick chooses the next pair (pickGroup: the group furthest behind its
// time share, and in it the live pair with the least load) and counts a
// case for it (busy, the pair's and the run's counts), or returns nil
// when none is left or MaxCases cases have been taken. In a group of
// sources' jobs alone the load is the pair's cases: the jobs take turns,
// so with one worker which case finds what depends on the seed, not on
// the machine's speed. It holds r.mu for that scan alone.
func (r *runner) pick() *pairState {
	r.mu.Lock()
	defer r.mu.Unlock()
	over := r.overtime.Load()
	if !over && r.c.MaxCases > 0 && r.cases >= r.c.MaxCases {
		over = true // only the cases owed to controls are left
	}
	best := r.pickGroup(over)
	if best == nil {
		return nil
	}
	best.busy.Add(1)
	best.cases.Add(1)
	r.cases++
	if best.invariant {
		r.invCases++
	}
	return best
}

// work is one worker: it checks cases until ctx ends or no pair is left.
func (r *runner) work(ctx, jobCtx context.Context) {
	for ctx.Err() == nil {
		p, k := r.next()
		if p == nil {
			return
		}
		cctx := ctx
		if p.job != nil {
			cctx = jobCtx
		}
		t0 := time.Now()
		f, err := Check(cctx, k, p.targets()...)
		spent := time.Since(t0)
		if errors.Is(err, target.ErrUnsupported) {
			r.unsupported(p, spent)
			continue
		}
		if f != nil {
			p.judge(f)
		}
		if f = r.record(cctx, p, f, err, spent); f != nil {
			if r.c.OnFound != nil {
				r.c.OnFound(*f)
			}
			r.found <- found{f, p}
		}
	}
}

// unsupported takes back a case a target declined: not a case, counted as
// skipped.
func (r *runner) unsupported(p *pairState, spent time.Duration) {
	r.mu.Lock()
	r.cases--
	if p.invariant {
		r.invCases--
	}
	r.skipped++
	r.mu.Unlock()
	p.busy.Add(-1)
	p.spent.Add(int64(spent))
	p.cases.Add(-1)
}

// record books a checked case on its pair: the pair retires at its first
// finding, which record returns (stamped with the time and the cases
// before it), or after 8 failures in a row, which become the run's error.
func (r *runner) record(ctx context.Context, p *pairState, f *spec.Finding, err error, spent time.Duration) *spec.Finding {
	failed := err != nil && ctx.Err() == nil
	p.spent.Add(int64(spent))
	p.busy.Add(-1)
	var first bool
	if p.job != nil && p.job.Repeat {
		first = f != nil && r.keep(p, f)
	} else {
		first = f != nil && !p.retired.Swap(true)
	}
	if first {
		p.found.Add(1)
	}
	fatal := false
	switch {
	case failed:
		if p.errs.Add(1) >= 8 {
			p.retired.Store(true)
			fatal = true
		}
	case err == nil:
		p.errs.Store(0)
	}
	if !first && !fatal {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if fatal && r.fatal == nil {
		r.fatal = fmt.Errorf("pair %s: 8 cases in a row failed, the last: %w", p.Pair, err)
	}
	if !first {
		return nil
	}
	f.Elapsed = spec.Duration(time.Since(r.start))
	f.CasesBefore = r.cases
	f.Env = r.env()
	return f
}

// keep reports whether f is the first finding of its kind and site on
// pair p (a Job.Repeat) and notes it.
func (r *runner) keep(p *pairState, f *spec.Finding) bool {
	key := string(f.Kind)
	if f.Site != nil {
		key += fmt.Sprintf("|%d|%s", f.Site.Layer, f.Site.Op)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.kept[key] {
		return false
	}
	p.kept[key] = true
	return true
}

// env is the fingerprint the campaign records: Campaign.Env, or the host's.
func (r *runner) env() spec.Env {
	if r.c.Env == (spec.Env{}) {
		return spec.HostEnv()
	}
	return r.c.Env
}

// minimizeAll shrinks and maps each finding the workers hand over (unless
// NoShrink: then only a source's Map runs) and keeps it, until found is closed: findings still queued at
// the deadline get lateShrinkBudget each, and none is shrunk once grace
// (Campaign.graceContext) has ended.
func (r *runner) minimizeAll(grace context.Context) {
	for fd := range r.found {
		f := fd.f
		switch {
		case r.c.NoShrink && fd.p.src != nil && fd.p.src.Map != nil && grace.Err() == nil:
			mapInPlace(grace, f, fd.p.src) // a source's map is not made by its Check
		case r.c.NoShrink:
		case grace.Err() == nil:
			budget := r.shrink
			if fd.p.src != nil && fd.p.src.ShrinkBudget > 0 {
				budget = fd.p.src.ShrinkBudget
			}
			if time.Now().After(r.deadline) {
				budget = min(budget, lateShrinkBudget)
			}
			sctx, cancel := context.WithTimeout(grace, budget)
			opts := r.c.minimizeOptions()
			opts.Targets = fd.p.targets()
			minimizeOrAbandon(grace, sctx, f, opts)
			fd.p.judge(f)
			cancel()
		default:
			f.Message += " (not minimized: the campaign's time was up)"
		}
		f.ToMinimal = spec.Duration(time.Since(r.start) - time.Duration(f.Elapsed))
		f.Env = r.env() // Minimize's Check records the host's
		r.mu.Lock()
		r.findings = append(r.findings, *f)
		r.mu.Unlock()
		if r.c.OnFinding != nil {
			r.c.OnFinding(*f)
		}
	}
}

// result is the campaign's result once every goroutine has returned: its
// findings in the order they were found, and per-target statistics.
func (r *runner) result() (*spec.Result, error) {
	st := r.stats()
	res := &spec.Result{Version: spec.ResultVersion, Started: r.start.UTC(), Seed: r.c.Seed, Env: r.env(),
		Duration: spec.Duration(st.Elapsed), Cases: st.Cases, InvariantCases: st.InvariantCases}
	sort.SliceStable(r.findings, func(i, j int) bool { return r.findings[i].Elapsed < r.findings[j].Elapsed })
	res.Findings = r.findings
	res.Targets = targetStats(r.pairs, r.findings)
	return res, r.fatal
}
