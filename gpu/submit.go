//go:build cuda

package gpu

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"gorgonia.org/cu"
)

// Calls on a Device run one at a time, in the order submitted, as under a
// mutex; but they are queued rather than locked for. The first caller to
// find nobody draining the queue drains it: its own call, then the calls
// queued meanwhile, on its OS thread (locked for the drain) with the
// context made current once (flat combining). The other callers sleep
// until their call has run. So a busy device runs its callers' host work
// back to back instead of handing a mutex from thread to thread at every
// call: on the H200 host, with a campaign's 16 workers, the mutex was idle
// half of the time while its waiters woke up (BenchmarkCheckCampaign,
// lock-%), and 97 % of the campaign's lock delay was on it.
//
// A drainer runs at most drainMax calls (its own first) and then hands the
// queue to the first caller waiting, so no caller drains forever.

// drainMax is how many calls a drainer runs before it hands the queue on.
const drainMax = 256

// call is one submitted call.
type call struct {
	f        func() error
	context  bool    // make the device's context current first (do)
	site     uintptr // the caller of do or locked, when the queue times sites
	err      error
	panicked any
	// sig wakes the caller: true when f has run, false when the caller is
	// to drain the queue (its call is first in it).
	sig chan bool
}

// callQueue is a Device's queue of calls.
type callQueue struct {
	mu       sync.Mutex
	calls    []*call
	draining bool          // a caller drains the queue (or is handed it)
	held     time.Duration // time spent draining, in all
	runs     int           // calls run, in all
	// sites, when not nil (benchmarks), sums the time of the calls by the
	// function that submitted them (owned by the drainer).
	sites map[uintptr]*siteTime
}

// siteTime is the time the calls of one site took, and their number.
type siteTime struct {
	took  time.Duration
	calls int
}

// do runs f on the device's queue with the device's context current and
// returns its error. f must not call do or locked.
func (d *Device) do(f func() error) error {
	return d.submit(&call{f: f, context: true, site: d.site()})
}

// locked runs f on the device's queue without making the context current:
// for host bookkeeping that makes no driver call (the pool's free lists, a
// slot's buffer), which a check does several times.
func (d *Device) locked(f func()) {
	d.submit(&call{f: func() error { f(); return nil }, site: d.site()})
}

// site returns the function that called do or locked when the queue times
// sites.
func (d *Device) site() uintptr {
	if !d.root.timeSites {
		return 0
	}
	pc, _, _, _ := runtime.Caller(2)
	return pc
}

// submit queues c, drains the queue when nobody does, and returns when c
// has run; a panic in c.f is raised again here, in its caller.
func (d *Device) submit(c *call) error {
	c.sig = make(chan bool, 1)
	q := &d.queue
	q.mu.Lock()
	q.calls = append(q.calls, c)
	drain := !q.draining
	q.draining = true
	q.mu.Unlock()
	for {
		if drain {
			d.drain()
		}
		if ran := <-c.sig; ran {
			break
		}
		drain = true
	}
	if c.panicked != nil {
		panic(c.panicked)
	}
	return c.err
}

// drain runs the queued calls in order until the queue is empty, or hands
// it to the next caller after drainMax calls.
func (d *Device) drain() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	q := &d.queue
	start := time.Now()
	var current bool
	var ctxErr error
	for ran := 0; ; ran++ {
		q.mu.Lock()
		if len(q.calls) == 0 || ran == drainMax {
			var next *call
			if len(q.calls) == 0 {
				q.draining = false
			} else {
				next = q.calls[0]
			}
			q.held += time.Since(start)
			q.runs += ran
			q.mu.Unlock()
			if next != nil {
				next.sig <- false
			}
			return
		}
		c := q.calls[0]
		q.calls[0] = nil
		q.calls = q.calls[1:]
		q.mu.Unlock()
		if c.context && !current {
			if err := cu.SetCurrentContext(d.ctx); err != nil {
				ctxErr = fmt.Errorf("gpu: make the context of %s current: %w", d.name, err)
			}
			current = true
		}
		var t0 time.Time
		if c.site != 0 {
			t0 = time.Now()
		}
		if c.context && ctxErr != nil {
			c.err = ctxErr
		} else {
			c.run()
		}
		if c.site != 0 {
			d.timeSite(c.site, time.Since(t0))
		}
		c.sig <- true
	}
}

// timeSite adds a call of site that took took (by the drainer).
func (d *Device) timeSite(site uintptr, took time.Duration) {
	q := &d.queue
	if q.sites == nil {
		q.sites = map[uintptr]*siteTime{}
	}
	st := q.sites[site]
	if st == nil {
		st = &siteTime{}
		q.sites[site] = st
	}
	st.took += took
	st.calls++
}

// run calls f, keeping a panic for the caller.
func (c *call) run() {
	defer func() {
		if p := recover(); p != nil {
			c.panicked = p
		}
	}()
	c.err = c.f()
}

// lockStats returns how long the device's queue has been drained in all
// (the time the device ran its callers' host work) and how many calls ran.
func (d *Device) lockStats() (time.Duration, int) {
	q := &d.queue
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.held, q.runs
}
