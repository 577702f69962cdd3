package fuzz

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Campaign runs every pair (Pairs) for a duration: it draws cases with
// gen.Case, runs Check, and shrinks and maps every finding. The zero value
// of every field is valid: 60 s, seed 0, every target and relation, no
// case limit, no progress calls, GOMAXPROCS/2 workers.
type Campaign struct {
	Duration time.Duration
	Seed     uint64
	// Targets and Relations filter the pairs: a pair runs when one of its
	// targets is listed (or the list is empty) and its relation is listed
	// (or the list is empty).
	Targets   []string
	Relations []string
	// MaxCases stops the campaign after that many cases (0: no limit).
	MaxCases int64
	// Progress, when set, is called about every ProgressEvery (default
	// 1 s) and once at the end, from one goroutine at a time.
	Progress      func(Stats)
	ProgressEvery time.Duration
	// Workers is the number of cases run at once (0: half of GOMAXPROCS,
	// at least 1: the oracle spreads each case's rows over GOMAXPROCS
	// goroutines already, and more workers than that only contend). One
	// more goroutine shrinks and maps findings meanwhile.
	Workers int
	// ShrinkBudget bounds the time spent shrinking one finding (0: 10 s;
	// LateShrinkBudget for findings still queued at the deadline; the
	// drift map has its own MapBudget). NoShrink reports findings as first
	// found.
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
	// all, counted from then, and are reported as far as they got (0:
	// LateShrinkBudget).
	Grace time.Duration
	// NoTaps compares outputs only (WithoutTaps): drift that changes only
	// fp32 intermediates is then found once it flips an output bit.
	NoTaps bool
	// Shard, when set, runs only the draws of each pair's case stream that
	// it owns (fuzz/shard.go); MaxCases then counts this shard's cases.
	Shard Shard
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
type pairState struct {
	target.Pair
	mu        sync.Mutex
	rng       *rand.Rand
	spent     time.Duration // wall time of its cases, for fair scheduling
	cases     int64
	retired   bool // a finding was made: no more cases
	busy      int
	drawn     int64 // draws of its stream so far, owned by the shard or not
	invariant bool
	errs      int
	lastErr   error
}

// ErrNoPairs is returned by Run when the filters leave nothing to run.
var ErrNoPairs = errors.New("no target and relation pair to run (bitparity list shows them)")

// Run runs the campaign until Duration has passed, MaxCases cases have run,
// every pair has a finding, or ctx ends; it returns what it found. A target
// that fails on a case (an error, not a finding) counts against that pair;
// a pair whose cases keep failing (8 in a row) stops and Run reports the
// last error among its findings as kind "crash" only when the target
// wrapped ErrTargetCrashed, else returns it.
func (c *Campaign) Run(ctx context.Context) (*spec.Result, error) {
	dur := c.Duration
	if dur <= 0 {
		dur = 60 * time.Second
	}
	workers := c.Workers
	if workers <= 0 {
		workers = max(1, runtime.GOMAXPROCS(0)/2)
	}
	shrinkBudget := c.ShrinkBudget
	if shrinkBudget <= 0 {
		shrinkBudget = 10 * time.Second
	}
	pairs, err := c.pairs()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res := &spec.Result{Version: spec.ResultVersion, Started: start.UTC(), Seed: c.Seed, Env: HostEnv()}
	deadline := start.Add(dur)
	if c.NoTaps {
		ctx = WithoutTaps(ctx)
	}
	runCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	var (
		mu       sync.Mutex
		cases    int64
		invCases int64
		skipped  int64 // cases a target declined (ErrUnsupported)
		findings []spec.Finding
		fatal    error
	)
	stats := func() Stats {
		mu.Lock()
		defer mu.Unlock()
		s := Stats{Elapsed: time.Since(start), Cases: cases, InvariantCases: invCases, Skipped: skipped, Findings: len(findings), Total: len(pairs)}
		for _, p := range pairs {
			p.mu.Lock()
			if !p.retired {
				s.Pairs++
			}
			p.mu.Unlock()
		}
		return s
	}
	// next picks the live pair that has had the least time (fair share),
	// draws its next case, or returns nil when none is left.
	next := func() (*pairState, spec.Case) {
		mu.Lock()
		defer mu.Unlock()
		if c.MaxCases > 0 && cases >= c.MaxCases {
			return nil, spec.Case{}
		}
		var best *pairState
		var bestLoad time.Duration // best's spent time, read under best's lock
		for _, p := range pairs {
			p.mu.Lock()
			load := p.spent + time.Duration(p.busy)*time.Millisecond
			if !p.retired && (best == nil || load < bestLoad) {
				best, bestLoad = p, load
			}
			p.mu.Unlock()
		}
		if best == nil {
			return nil, spec.Case{}
		}
		best.mu.Lock()
		defer best.mu.Unlock()
		k := c.Shard.draw(best.rng, best.Op, best.Relation, &best.drawn)
		k.Targets = append([]string(nil), best.Targets...)
		best.busy++
		cases++
		if best.invariant {
			invCases++
		}
		best.cases++
		return best, k
	}

	done := make(chan struct{})
	ticker := make(chan struct{}) // closed when the progress goroutine has returned
	if c.Progress == nil {
		close(ticker)
	} else {
		every := c.ProgressEvery
		if every <= 0 {
			every = time.Second
		}
		go func() {
			defer close(ticker)
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					c.Progress(stats())
				}
			}
		}()
	}

	found := make(chan *spec.Finding, 1024)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil {
				p, k := next()
				if p == nil {
					return
				}
				t0 := time.Now()
				f, err := Check(runCtx, k)
				spent := time.Since(t0)
				if errors.Is(err, target.ErrUnsupported) {
					// the target has no kernel for this batch: not a case
					mu.Lock()
					cases--
					if p.invariant {
						invCases--
					}
					skipped++
					mu.Unlock()
					p.mu.Lock()
					p.busy--
					p.spent += spent
					p.cases--
					p.mu.Unlock()
					continue
				}
				p.mu.Lock()
				p.busy--
				p.spent += spent
				first := f != nil && !p.retired
				if f != nil {
					p.retired = true
				}
				if err != nil && runCtx.Err() == nil {
					p.errs++
					p.lastErr = err
					if p.errs >= 8 {
						p.retired = true
					}
				} else if err == nil {
					p.errs = 0
				}
				p.mu.Unlock()
				if err != nil && runCtx.Err() == nil {
					mu.Lock()
					if p.errs >= 8 && fatal == nil {
						fatal = fmt.Errorf("pair %s: 8 cases in a row failed, the last: %w", p.Pair, err)
					}
					mu.Unlock()
				}
				if !first {
					continue
				}
				mu.Lock()
				f.Elapsed = spec.Duration(time.Since(start))
				f.CasesBefore = cases
				mu.Unlock()
				if c.OnFound != nil {
					c.OnFound(*f)
				}
				found <- f
			}
		}()
	}
	// One goroutine shrinks and maps findings while the workers go on;
	// findings still queued at the deadline get LateShrinkBudget each, and
	// all of them together Grace once the deadline has passed or ctx has
	// ended: Run returns by Duration + Grace.
	graceCtx, stopGrace := c.graceContext(runCtx)
	defer stopGrace()
	shrunk := make(chan struct{})
	go func() {
		defer close(shrunk)
		for f := range found {
			if !c.NoShrink && graceCtx.Err() == nil {
				budget := shrinkBudget
				if time.Now().After(deadline) {
					budget = min(budget, LateShrinkBudget)
				}
				sctx, scancel := context.WithTimeout(graceCtx, budget)
				minimizeOrAbandon(graceCtx, sctx, f)
				scancel()
			} else if !c.NoShrink {
				f.Message += " (not minimized: the campaign's time was up)"
			}
			f.ToMinimal = spec.Duration(time.Since(start) - time.Duration(f.Elapsed))
			mu.Lock()
			findings = append(findings, *f)
			mu.Unlock()
			if c.OnFinding != nil {
				c.OnFinding(*f)
			}
		}
	}()
	wg.Wait()
	close(found)
	<-shrunk
	close(done)
	<-ticker // Progress is never called twice at once
	st := stats()
	if c.Progress != nil {
		c.Progress(st)
	}
	res.Duration = spec.Duration(st.Elapsed)
	res.Cases = st.Cases
	res.InvariantCases = st.InvariantCases
	sort.SliceStable(findings, func(i, j int) bool { return findings[i].Elapsed < findings[j].Elapsed })
	res.Findings = findings
	res.Targets = targetStats(pairs, findings)
	if fatal != nil {
		return res, fatal
	}
	return res, nil
}

// graceContext returns the context findings are shrunk under: it ends
// Grace (default LateShrinkBudget) after ctx ends, so an interrupted
// campaign still shrinks what it found, for a bounded time.
func (c *Campaign) graceContext(ctx context.Context) (context.Context, context.CancelFunc) {
	grace := c.Grace
	if grace <= 0 {
		grace = LateShrinkBudget
	}
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

// minimizeOrAbandon shrinks f under sctx (minimizeInPlace), but keeps f as
// found when stop ends first: Minimize's drift map runs under its own
// budget, which an interrupted campaign does not wait for (the abandoned
// minimization ends within that budget).
func minimizeOrAbandon(stop, sctx context.Context, f *spec.Finding) {
	g := *f
	done := make(chan struct{})
	go func() {
		minimizeInPlace(sctx, &g)
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
		if _, err := target.Lookup(name); err != nil {
			return nil, err
		}
	}
	for _, name := range c.Relations {
		if _, err := RelationByName(name); err != nil {
			return nil, err
		}
	}
	var out []*pairState
	for i, p := range Pairs() {
		if len(c.Relations) > 0 && !contains(c.Relations, p.Relation) {
			continue
		}
		if len(c.Targets) > 0 {
			hit := false
			for _, t := range p.Targets {
				hit = hit || contains(c.Targets, t)
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
		seed := int64(splitmix(c.Seed ^ splitmix(uint64(i)+1)))
		out = append(out, &pairState{Pair: p, rng: rand.New(rand.NewSource(seed)), invariant: inv})
	}
	if len(out) == 0 {
		return nil, ErrNoPairs
	}
	return out, nil
}

// targetStats counts cases and findings per target.
func targetStats(pairs []*pairState, findings []spec.Finding) []spec.TargetStats {
	by := map[string]*spec.TargetStats{}
	var names []string
	for _, p := range pairs {
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
			s.Cases += p.cases
			if !contains(s.Relations, p.Relation) {
				s.Relations = append(s.Relations, p.Relation)
			}
		}
	}
	// A finding counts for the drift models it names; only a finding that
	// names invariant targets alone counts for them.
	countFindings(by, findings)
	sort.Strings(names)
	out := make([]spec.TargetStats, 0, len(names))
	for _, n := range names {
		out = append(out, *by[n])
	}
	return out
}

// Cost limits of drawn cases, in fma-equivalents of CPU work over every
// batch the relation builds (CaseCost). gen.Case already keeps most cases
// small (gen.SmallWork); the campaign caps what it takes at SmallCost (8x
// for attention prefill, whose rows cost the square of their length), and
// one draw in BigEvery takes one of gen's medium or big cases (more than
// gen.SmallWork: hundreds or thousands of rows with a hidden size past 256,
// long KV caches) of up to BigCost, so the thresholds that only large
// batches cross are reached every few seconds.
const (
	SmallCost = 1 << 20
	BigCost   = 1 << 23
	BigEvery  = 10
)

// drawCase draws from gen.Case: a small draw takes the first case with
// CaseCost <= SmallCost (of at most 64); a big draw (one in BigEvery)
// collects up to 8 of gen's medium or big cases (gen.Work > gen.SmallWork)
// with CaseCost <= BigCost (of at most 512 draws) and takes the most
// balanced one (balance): gen's budget trades the batch size against the
// row size, while dispatch thresholds want both large at once (256 tokens
// of a 1024-wide RMSNorm, 132 requests of a 65-token KV cache). When
// nothing fits, the cheapest case drawn. The shapes keep gen's bias; only
// their cost is bounded.
func drawCase(r *rand.Rand, op spec.Op, relation string) spec.Case {
	small := int64(SmallCost)
	if op == spec.OpAttnPrefill {
		small *= 8
	}
	big := r.Intn(BigEvery) == 0
	var cheap, best spec.Case
	cheapCost, bestBal, found := int64(-1), -1, 0
	for i := 0; i < 512 && (big || i < 64); i++ {
		c := gen.Case(r, op, relation)
		cost := CaseCost(c)
		if !big && cost <= small {
			return c
		}
		if big && cost <= BigCost && gen.Work(c) > gen.SmallWork {
			if b := balance(c); b > bestBal {
				best, bestBal = c, b
			}
			if found++; found == 8 {
				break
			}
		}
		if cheapCost < 0 || cost < cheapCost {
			cheap, cheapCost = c, cost
		}
	}
	if found > 0 {
		return best
	}
	return cheap
}

// balance is min(batch size, row size) of a case: the batch size is the
// largest batch its relation builds (items, Rel.Batch, Rel.Pad; times the
// heads for decode), the row size its reduction length (hidden, vocab, KV
// length); a prefill's is its sequence length alone.
func balance(c spec.Case) int {
	s := c.Shape
	n := max(caseItems(c), c.Rel.Batch, c.Rel.Pad)
	switch c.Op {
	case spec.OpRMSNorm, spec.OpGEMM:
		return min(n, s.Hidden)
	case spec.OpLogProb:
		return min(n, s.Vocab)
	case spec.OpAttnDecode:
		return min(n*s.Heads, s.KV)
	case spec.OpAttnPrefill:
		return s.SeqLen // a prefill's threshold is its length (KV tile edges)
	}
	return 0
}

// CaseCost estimates the CPU work of checking case c, in fma-equivalents:
// the work of one item (an Exp32 counts 12, a generated input value 4,
// every output row 500 for the oracle's per-row overhead) times the items
// of the batches the relation runs (path parity of attention prefill runs
// only the last position of each sequence): batch invariance the case's batch
// twice, the item alone and Rel.Batch; padding the batch and Rel.Pad; the
// others the batch twice.
func CaseCost(c spec.Case) int64 {
	s := c.Shape
	var item int64
	switch c.Op {
	case spec.OpRMSNorm:
		item = 5*int64(s.Hidden) + 500
	case spec.OpGEMM:
		item = int64(s.Hidden)*int64(s.N) + 4*int64(s.Hidden) + 500
	case spec.OpLogProb:
		item = 18*int64(s.Vocab) + 500
	case spec.OpAttnPrefill:
		if c.Relation == spec.RelPathParity { // the last position of each sequence
			item = int64(s.Heads)*(int64(s.SeqLen)*int64(2*s.HeadDim+12)+500) +
				4*int64(s.SeqLen)*int64(s.Heads+2*s.KVHeads)*int64(s.HeadDim)
			break
		}
		item = int64(s.Heads) * int64(s.SeqLen) * (int64(s.SeqLen+1)/2*int64(2*s.HeadDim+12) + 4*int64(s.HeadDim) + 500)
	case spec.OpAttnDecode:
		kv := s.KV
		for _, l := range s.KVLens {
			kv = max(kv, l)
		}
		item = int64(s.Heads) * (int64(kv)*int64(2*s.HeadDim+12+8) + 500)
	}
	n := int64(caseItems(c))
	runs := 2 * n
	switch c.Relation {
	case spec.RelBatchInvariance:
		runs = 2*n + 1 + int64(c.Rel.Batch)
	case spec.RelPadding:
		runs = n + int64(c.Rel.Pad)
	}
	return item * runs
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
