//go:build cuda

package gpu

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/internal/gogc"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// campaignChecks are the checks BenchmarkCheckCampaign measures, each a
// case of a new seed a check:
//
//	rmsnorm-2274x4096  batch invariance of 2274 x 4096 bf16 RMSNorm: the
//	                   watched row alone, in a batch of 928 and in the
//	                   batch permuted (four runs, three compares of values
//	                   and three of taps)
//	rmsnorm-pad-4548   padding invariance of the same batch padded to
//	                   4548 rows with zero filler (two runs)
//	decode-kv4096      batch invariance of decode attention, 4 requests of
//	                   4096 cached tokens, 8 heads on 2 KV heads of 128
var campaignChecks = []struct {
	name string
	op   spec.Op
	c    func(seed uint64) spec.Case
}{
	{"rmsnorm-2274x4096", spec.OpRMSNorm, campaignCase},
	{"rmsnorm-pad-4548", spec.OpRMSNorm, func(seed uint64) spec.Case {
		c := campaignCase(seed)
		c.Relation, c.Rel = spec.RelPadding, spec.RelParams{Pad: 4548, Filler: "zeros"}
		return c
	}},
	{"decode-kv4096", spec.OpAttnDecode, func(seed uint64) spec.Case {
		return spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpAttnDecode,
			Relation: spec.RelBatchInvariance, Targets: []string{Name(spec.OpAttnDecode)}, In: spec.BF16, Out: spec.BF16,
			Dist: spec.DistNormal, Seed: seed, Shape: spec.Shape{Rows: 4, KV: 4096, Heads: 8, KVHeads: 2, HeadDim: 128},
			Rel: spec.RelParams{Row: 1, Batch: 2, Position: 1, PermSeed: seed}}
	}},
}

// campaignCase is the batch-invariance case of rmsnorm-2274x4096.
func campaignCase(seed uint64) spec.Case {
	return spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
		Relation: spec.RelBatchInvariance, Targets: []string{Name(spec.OpRMSNorm)}, In: spec.BF16, Out: spec.BF16,
		Dist: spec.DistNormal, Seed: seed, Eps: 1e-6, Shape: spec.Shape{Rows: 2274, Hidden: 4096},
		Rel: spec.RelParams{Row: 5, Batch: 928, Position: 100, PermSeed: seed}}
}

// BenchmarkCheckCampaign is the check a GPU campaign makes, end to end,
// against the device time of its kernels, for each of campaignChecks:
//
// It runs under the campaign's garbage collector target
// (gogc.Campaign) unless GOGC is set.
//
//	checks/s:     fuzz.Check of the case on the op's cuda target, a new
//	              seed each check, -inflight checks at once (default
//	              runtime.GOMAXPROCS(0): a campaign's workers sharing one
//	              device, one per CPU), inputs from the seed (made on the
//	              device when the target generates them)
//	bare/s:       1 / the device time of the kernels one check launches
//	              (kernelTimer: each launch between two events, summed; the
//	              median of 9 checks run one at a time), input generation
//	              (gen_values) not counted
//	ratio:        checks/s / bare/s (issue 19 asks for at least 0.5)
//	lazy-%:       the share of checks whose batch was never made on the host
//	queue-us/check the time the device's call queues ran host work
//	              (launches, copies, bookkeeping: do and locked, one call
//	              at a time on each lane), summed over the lanes, per check
//	calls/check   the calls it ran, per check
//	queue-%:      queue-us over the wall time, summed over the lanes: near
//	              100 times the lanes (-streams), the one-at-a-time host
//	              work is what limits the rate
//	busy-%:       with -busy only (it adds two events a launch): the device
//	              time of every kernel launched in flight, gen_values
//	              included, over the wall time
func BenchmarkCheckCampaign(b *testing.B) {
	for _, k := range campaignChecks {
		b.Run(k.name, func(b *testing.B) { benchCheck(b, k.op, k.c) })
	}
}

var (
	benchInFlight = flag.Int("inflight", 0, "checks in flight in BenchmarkCheckCampaign (0: runtime.GOMAXPROCS(0))")
	benchBusy     = flag.Bool("busy", false, "BenchmarkCheckCampaign: time every launch in flight and report busy-%")
	benchSites    = flag.Bool("sites", false, "BenchmarkCheckCampaign: log the device queue's time by the function that submitted the calls")
	benchStreams  = flag.Int("streams", 0, "BenchmarkCheckCampaign: the streams the checks in flight are spread over (0: gpu.Streams())")
)

func benchCheck(b *testing.B, op spec.Op, mk func(seed uint64) spec.Case) {
	d := device(b)
	if os.Getenv("GOGC") == "" { // as bitparity run sets it for a campaign
		defer debug.SetGCPercent(debug.SetGCPercent(gogc.Campaign))
	}
	tg, err := target.Lookup(Name(op))
	if err != nil {
		b.Fatal(err)
	}
	var lazy atomic.Int64
	counted := countLazy{Target: tg, lazy: &lazy}
	check := func(ctx context.Context, seed uint64) error {
		f, err := fuzz.Check(ctx, mk(seed), counted)
		if err != nil {
			return err
		}
		if f != nil {
			return fmt.Errorf("%s: %s", tg.Info().Name, f.Message)
		}
		return nil
	}
	if *benchBusy || *benchStreams > 0 {
		n := 1 // -busy times the launches of lane 0 only
		if !*benchBusy {
			n = *benchStreams
		}
		defer SetStreams(Streams())
		if err := SetStreams(n); err != nil {
			b.Fatal(err)
		}
	}
	if err := check(context.Background(), 1); err != nil { // warm-up: slots, pool
		b.Fatal(err)
	}
	seed := uint64(1)
	bare, err := d.kernelTime(9, func() error { seed++; return check(context.Background(), seed) })
	if err != nil {
		b.Fatal(err)
	}
	inFlight := *benchInFlight
	if inFlight <= 0 {
		inFlight = runtime.GOMAXPROCS(0) // as many checks at once as a campaign's workers
	}
	// warm up as a campaign is warm: the pool, the slots and the upload
	// ring sized for inFlight checks at once
	if err := checksInFlight(inFlight, 2*inFlight, 1<<20, check); err != nil {
		b.Fatal(err)
	}
	var busy *kernelTimer
	if *benchBusy {
		if busy, err = d.startTimer(true); err != nil {
			b.Fatal(err)
		}
	}
	if *benchSites {
		d.timeSites = true // no check runs now
		for _, l := range d.allLanes() {
			l.do(func() error { l.queue.sites = nil; return nil })
		}
	}
	lazy.Store(0)
	held0, holds0 := d.queueStats()
	b.ResetTimer()
	start := time.Now()
	if err := checksInFlight(inFlight, b.N, 1000, check); err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	held, holds := d.queueStats()
	if busy != nil {
		t, err := busy.stop()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(100*t.Seconds()/took.Seconds(), "busy-%")
	}
	if *benchSites {
		sites := map[uintptr]*siteTime{}
		for _, l := range d.allLanes() {
			l.do(func() error {
				for pc, st := range l.queue.sites {
					if sites[pc] == nil {
						sites[pc] = &siteTime{}
					}
					sites[pc].took += st.took
					sites[pc].calls += st.calls
				}
				l.queue.sites = nil
				return nil
			})
		}
		logSites(b, sites, b.N)
		d.timeSites = false
	}
	rate := float64(b.N) / took.Seconds()
	b.ReportMetric(rate, "checks/s")
	b.ReportMetric(1/bare.Seconds(), "bare/s")
	b.ReportMetric(rate*bare.Seconds(), "ratio")
	b.ReportMetric(100*float64(lazy.Load())/float64(b.N), "lazy-%")
	b.ReportMetric(float64((held-held0).Microseconds())/float64(b.N), "queue-us/check")
	b.ReportMetric(float64(holds-holds0)/float64(b.N), "calls/check")
	b.ReportMetric(100*(held-held0).Seconds()/took.Seconds(), "queue-%")
}

// logSites logs the queue's time by submitting function, per check, the
// longest first.
func logSites(b *testing.B, sites map[uintptr]*siteTime, checks int) {
	type row struct {
		name string
		st   siteTime
	}
	var rows []row
	for pc, st := range sites {
		name := "?"
		if f := runtime.FuncForPC(pc); f != nil {
			_, line := f.FileLine(pc)
			name = fmt.Sprintf("%s:%d", f.Name(), line)
		}
		rows = append(rows, row{name, *st})
	}
	slices.SortFunc(rows, func(x, y row) int { return int(y.st.took - x.st.took) })
	for _, r := range rows {
		b.Logf("%8.1f us/check %6.2f calls/check %6.1f us/call  %s", float64(r.st.took.Microseconds())/float64(checks),
			float64(r.st.calls)/float64(checks), float64(r.st.took.Microseconds())/float64(max(1, r.st.calls)), r.name)
	}
}

// checksInFlight runs check on seeds first+1 .. first+n, inFlight at once,
// each under a context tagged with its worker index (target.WithWorker),
// and returns the first error.
func checksInFlight(inFlight, n int, first uint64, check func(ctx context.Context, seed uint64) error) error {
	var next atomic.Uint64
	var wg sync.WaitGroup
	errs := make(chan error, inFlight)
	for w := range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := target.WithWorker(context.Background(), w)
			for {
				k := next.Add(1)
				if k > uint64(n) {
					return
				}
				if err := check(ctx, first+k); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// kernelTimer times kernel launches on the device (Device.around): each
// launch between two events, their elapsed times summed.
type kernelTimer struct {
	d            *Device
	withGen      bool // time gen_values (input generation) too
	queued, free []eventPair
}

type eventPair struct{ a, b cu.Event }

// startTimer hooks every later launch on d until stop.
func (d *Device) startTimer(withGen bool) (*kernelTimer, error) {
	t := &kernelTimer{d: d, withGen: withGen}
	return t, d.do(func() error {
		if d.around != nil {
			return fmt.Errorf("a kernel timer is already running")
		}
		d.around = t.around
		return nil
	})
}

// around launches one kernel between two events (under do).
func (t *kernelTimer) around(kernel string, launch func() error) error {
	if kernel == "gen_values" && !t.withGen {
		return launch()
	}
	var p eventPair
	if k := len(t.free); k > 0 {
		p, t.free = t.free[k-1], t.free[:k-1]
	} else {
		var err error
		if p.a, err = cu.MakeEvent(cu.DefaultEvent); err != nil {
			return err
		}
		if p.b, err = cu.MakeEvent(cu.DefaultEvent); err != nil {
			return err
		}
	}
	if err := p.a.Record(cu.Stream{}); err != nil {
		return err
	}
	err := launch()
	if rerr := p.b.Record(cu.Stream{}); err == nil {
		err = rerr
	}
	t.queued = append(t.queued, p)
	return err
}

// sum waits for the device and returns the time of the kernels timed since
// the last sum (under do).
func (t *kernelTimer) sum() (time.Duration, error) {
	if err := t.d.sync("kernel time"); err != nil {
		return 0, err
	}
	var sum time.Duration
	for _, p := range t.queued {
		ms, err := p.a.Elapsed(p.b)
		if err != nil {
			return 0, err
		}
		sum += time.Duration(float64(ms) * 1e6)
	}
	t.free, t.queued = append(t.free, t.queued...), t.queued[:0]
	return sum, nil
}

// stop unhooks the timer, frees its events and returns the time of the
// kernels timed since the last sum.
func (t *kernelTimer) stop() (sum time.Duration, err error) {
	err = t.d.do(func() error {
		t.d.around = nil
		sum, err = t.sum()
		for _, p := range append(t.queued, t.free...) {
			cu.DestroyEvent(&p.a)
			cu.DestroyEvent(&p.b)
		}
		return err
	})
	return sum, err
}

// kernelTime returns the device time of the kernels check launches, but
// gen_values (input generation, the harness's): the median over reps
// checks run one at a time.
func (d *Device) kernelTime(reps int, check func() error) (time.Duration, error) {
	t, err := d.startTimer(false)
	if err != nil {
		return 0, err
	}
	var times []time.Duration
	for range reps {
		if err = check(); err != nil {
			break
		}
		var sum time.Duration
		if err = d.do(func() (err error) { sum, err = t.sum(); return err }); err != nil {
			break
		}
		times = append(times, sum)
	}
	if _, serr := t.stop(); err == nil {
		err = serr
	}
	if err != nil {
		return 0, err
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

// countLazy passes a GPU target through, counting the checks whose batch
// of the whole case reached it unmade (lazy) as the target's own Run.
type countLazy struct {
	target.Target
	lazy *atomic.Int64
}

func (c countLazy) Generates(src *target.Source) bool {
	g, ok := c.Target.(target.Generator)
	return ok && g.Generates(src)
}

func (c countLazy) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if b.Lazy() && b.Source.Items == nil {
		c.lazy.Add(1)
	}
	return c.Target.Run(ctx, b, rows)
}
