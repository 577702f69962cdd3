package external

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

// MaxProcs bounds Options.Procs: each process of an adapter holds its own
// library and device context (half a GB of GPU memory for torch).
const MaxProcs = 64

// AutoProcs is Target.Procs when Options.Procs is 0: one process for every
// two CPU cores, at most 8. What a process spends on a KV cut is mostly
// host work (an attention library plans a kernel for every new shape:
// torch's cuDNN SDPA takes about 75 ms of one core a shape, then 0.1 ms),
// so the processes divide it; on 2 cores a scan keeps one.
func AutoProcs() int { return min(8, max(1, runtime.NumCPU()/2)) }

// Procs is how many processes of the adapter a path scan spreads its
// frames of KV cuts over: Options.Procs, or AutoProcs when that is 0.
func (t *Target) Procs() int { return t.opts.procs() }

// procs is Options.Procs, or AutoProcs when that is 0.
func (o Options) procs() int {
	if o.Procs > 0 {
		return o.Procs
	}
	return AutoProcs()
}

// Clone returns another process of t's command line with t's options, as
// a target of its own, after checking that it is the same adapter: its
// hello names the same op, name, schedule, device and description, and
// takes the same frames. It is one of the spares started with t
// (Options.Prestart) while any is left, waiting for it to start, else (or
// when that spare failed to start) a process started now. The clone is
// closed by Close (and by CloseAll); it is not registered under a name,
// and Lookup never returns it.
func (t *Target) Clone(ctx context.Context) (*Target, error) {
	c, err := t.spares.take(ctx)
	if c == nil && ctx.Err() == nil { // no spare left, or one that failed to start (16 at once): start one now
		if c, err = NewContext(ctx, t.cmdline, t.op, t.opts); err == nil {
			trackClone(c)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("a second process of %s: %w", t.info.Name, err)
	}
	for _, k := range []string{"op", "name", "schedule", "device", "about", "scan", "scan_cuts"} {
		if c.hello[k] != t.hello[k] {
			c.Close()
			return nil, fmt.Errorf("a second process of %s says %s %q in its hello, the first %q: not the same adapter", t.info.Name, k, c.hello[k], t.hello[k])
		}
	}
	c.info = t.info
	return c, nil
}

// spares are processes of one command line started beside the first
// (startAll), each delivered on ready as it starts.
type spares struct {
	mu    sync.Mutex
	left  int // not yet taken
	ready chan spare
}

type spare struct {
	t   *Target
	err error
}

// take returns the next spare to start (nil, nil when none is left; s may
// be nil), or ctx's error while it waits.
func (s *spares) take(ctx context.Context) (*Target, error) {
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	if s.left == 0 {
		s.mu.Unlock()
		return nil, nil
	}
	s.left--
	s.mu.Unlock()
	select {
	case sp := <-s.ready:
		return sp.t, sp.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// startAll starts every command line at once (NewContext with opts, op
// from the hello) and returns the targets in order; with opts.Prestart it
// also starts Procs-1 spares of each beside it, which its Clone hands out
// (tracked once started, so CloseAll ends them). On an error every target
// started is closed and the first error, in command-line order, returned.
func startAll(ctx context.Context, cmdlines []string, opts Options) ([]*Target, error) {
	ts := make([]*Target, len(cmdlines))
	errs := make([]error, len(cmdlines))
	sps := make([]*spares, len(cmdlines))
	var wg sync.WaitGroup
	for i, cl := range cmdlines {
		if opts.Prestart {
			sps[i] = startSpares(ctx, cl, opts)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts[i], errs[i] = NewContext(ctx, cl, "", opts)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err == nil {
			continue
		}
		for i, t := range ts {
			if t != nil {
				t.Close()
			}
			sps[i].drop()
		}
		return nil, err
	}
	for i, t := range ts {
		t.spares = sps[i]
	}
	return ts, nil
}

// startSpares starts Procs-1 processes of cmdline, each tracked and
// delivered as it starts.
func startSpares(ctx context.Context, cmdline string, opts Options) *spares {
	n := opts.procs() - 1
	s := &spares{left: n, ready: make(chan spare, n)}
	for range n {
		go func() {
			t, err := NewContext(ctx, cmdline, "", opts)
			if err == nil {
				trackClone(t)
			}
			s.ready <- spare{t, err}
		}()
	}
	return s
}

// DropSpares closes the spare processes started with t (Options.Prestart)
// that Clone has not handed out, as they start: a scan that needs no more
// clones gives back their memory at once.
func (t *Target) DropSpares() { t.spares.drop() }

// drop closes the spares that are left as they start.
func (s *spares) drop() {
	if s == nil {
		return
	}
	s.mu.Lock()
	n := s.left
	s.left = 0
	s.mu.Unlock()
	go func() {
		for range n {
			if sp := <-s.ready; sp.t != nil {
				sp.t.Close()
			}
		}
	}()
}
