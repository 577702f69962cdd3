package scan

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/target"
)

// pathProcs are the processes a path scan on adapters that take steps of
// KV cuts spreads its frames over: pre[i] and dec[i] are pair i, pair 0
// the scan's own targets, the others their clones (external.Target.Clone),
// started at the first draw and closed when the scan ends (closeProcs).
type pathProcs struct {
	pre, dec []*external.Target
}

// frameAnswer is one frame's answer: a Step a cut from each adapter, or
// the error of either.
type frameAnswer struct {
	pre, dec []*external.Step
	err      error
}

// cutProcs returns the scan's pairs of processes, starting them at the
// first call: the prefill adapter's Procs, at most one pair for every
// four of the n KV lengths, the clones started at once.
func (sc *scanner) cutProcs(ctx context.Context, pre, dec *external.Target, n int) (*pathProcs, error) {
	if sc.procs != nil {
		return sc.procs, nil
	}
	pp := &pathProcs{pre: []*external.Target{pre}, dec: []*external.Target{dec}}
	more := min(pre.Procs(), max(1, n/4)) - 1
	if more > 0 {
		pp.pre = append(pp.pre, make([]*external.Target, more)...)
		pp.dec = append(pp.dec, make([]*external.Target, more)...)
		errs := make([]error, 2*more)
		var wg sync.WaitGroup
		for i := range more {
			for j, ts := range [][]*external.Target{pp.pre, pp.dec} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ts[1+i], errs[2*i+j] = ts[0].Clone(ctx)
				}()
			}
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			pp.close()
			return nil, fmt.Errorf("start %d processes of each adapter (--exec-procs): %w", more+1, err)
		}
	}
	pre.DropSpares() // what was started beside them and is not needed
	dec.DropSpares()
	sc.procs = pp
	return pp, nil
}

// size is the number of pairs.
func (pp *pathProcs) size() int { return len(pp.pre) }

// hold sends the draw's sequences b to every process, all at once.
func (pp *pathProcs) hold(ctx context.Context, b *target.Batch) error {
	all := append(append([]*external.Target(nil), pp.pre...), pp.dec...)
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, t := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := t.HoldSequences(ctx, b); err != nil {
				errs[i] = fmt.Errorf("hold the sequences in %s (process %d): %w", t.Info().Name, i%len(pp.pre)+1, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// run sends the frames to the pairs, frame i to pair i mod size, each
// pair's frames in order and its two adapters at once, and returns a
// channel a frame that gets its answer, and stop. After an error a pair
// answers its remaining frames with it without running them; so does
// every pair once ctx ends, or once stop was called: stop waits for the
// frames in flight to end (their processes stay up) and for the pairs.
func (pp *pathProcs) run(ctx context.Context, frames [][]int) (answers []chan frameAnswer, stop func()) {
	answers = make([]chan frameAnswer, len(frames))
	for i := range answers {
		answers[i] = make(chan frameAnswer, 1)
	}
	var (
		stopped atomic.Bool
		wg      sync.WaitGroup
	)
	for w := range pp.size() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			for i := w; i < len(frames); i += pp.size() {
				if err == nil && stopped.Load() {
					err = errors.New("the scan stopped")
				}
				if err == nil {
					err = ctx.Err()
				}
				if err != nil {
					answers[i] <- frameAnswer{err: err}
					continue
				}
				a := pp.step(ctx, w, frames[i])
				err = a.err
				answers[i] <- a
			}
		}()
	}
	return answers, func() {
		stopped.Store(true)
		wg.Wait()
	}
}

// step runs one frame of cuts on pair w, its prefill and decode at once.
func (pp *pathProcs) step(ctx context.Context, w int, cuts []int) frameAnswer {
	var (
		a    frameAnswer
		errD error
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.dec, errD = pp.dec[w].StepCuts(ctx, cuts)
	}()
	var errP error
	a.pre, errP = pp.pre[w].StepCuts(ctx, cuts)
	wg.Wait()
	a.err = errors.Join(errP, errD)
	return a
}

// close ends the clones (pair 0 is the scan's own targets).
func (pp *pathProcs) close() {
	for i := 1; i < len(pp.pre); i++ {
		for _, t := range []*external.Target{pp.pre[i], pp.dec[i]} {
			if t != nil {
				t.Close()
			}
		}
	}
}
