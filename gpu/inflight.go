//go:build cuda

package gpu

import (
	"fmt"
	"runtime"

	"gorgonia.org/cu"
)

// waiters is how many threads wait for queued work (finishCompare), each
// with the device's context current: while they block, the device's
// goroutine goes on launching the next checks, so the GPU is not left idle
// for a round trip to the host per check when several checks are in
// flight (campaign workers share one Device).
const waiters = 4

// slot is the page-locked host memory and the event of one compare in
// flight: the pairs it uploads from and the summaries it reads back into.
type slot struct {
	host []byte
	ev   cu.Event
}

// takeSlot returns a free slot whose host memory holds n bytes, creating
// or growing one as needed (worker goroutine only: it allocates).
func (d *Device) takeSlot(n int) (*slot, error) {
	d.slotMu.Lock()
	var sl *slot
	if k := len(d.slots); k > 0 {
		sl, d.slots = d.slots[k-1], d.slots[:k-1]
	}
	d.slotMu.Unlock()
	if sl == nil {
		ev, err := cu.MakeEvent(cu.DisableTiming)
		if err != nil {
			return nil, fmt.Errorf("gpu: create an event: %w", err)
		}
		sl = &slot{ev: ev}
	}
	if cap(sl.host) < n {
		p, err := allocPinned(max(n+n/4, 4096))
		if err != nil {
			d.putSlot(sl)
			return nil, err
		}
		freePinned(sl.host)
		sl.host = p
	}
	sl.host = sl.host[:n]
	return sl, nil
}

// putSlot makes sl free again; nothing queued may still use it.
func (d *Device) putSlot(sl *slot) {
	d.slotMu.Lock()
	d.slots = append(d.slots, sl)
	d.slotMu.Unlock()
}

// startWaiters starts the waiter threads with ctx current on each.
func (d *Device) startWaiters(ctx cu.CUContext) error {
	d.waits = make(chan func())
	errc := make(chan error)
	for range waiters {
		go func() {
			runtime.LockOSThread()
			if err := cu.SetCurrentContext(ctx); err != nil {
				errc <- fmt.Errorf("gpu: make the context current on a waiter thread: %w", err)
				return
			}
			errc <- nil
			for f := range d.waits {
				f()
			}
		}()
	}
	var first error
	for range waiters {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// wait blocks until ev has completed, on a waiter thread, and reports the
// failure of any work queued before it.
func (d *Device) wait(ev cu.Event) error {
	done := make(chan error, 1)
	d.waits <- func() { done <- ev.Synchronize() }
	if err := <-done; err != nil {
		return fmt.Errorf("wait for the queued work: %w", err)
	}
	return nil
}
