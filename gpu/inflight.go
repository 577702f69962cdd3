//go:build cuda

package gpu

import (
	"fmt"
	"runtime"

	"gorgonia.org/cu"
)

// slot is what one compare in flight holds: page-locked host memory, mapped
// into the device (the pairs it uploads from, the count compare_rows
// stores there), the device buffer compare_rows writes its counters and
// summaries to, and the event that marks the compare done.
//
// A free slot's res starts with two zero counters: compare_rows leaves
// them so, and a res attached to a slot is zeroed first.
type slot struct {
	host     []byte
	hostAddr cu.DevicePtr // device address of host[0]
	res      *buffer
	ev       cu.Event
}

// countAt is where a compare of n pairs gets its count: the 4 bytes of
// host after the two pair lists, and their device address.
func (sl *slot) countAt(n int) ([]byte, cu.DevicePtr) {
	return sl.host[16*n : 16*n+4], sl.hostAddr + cu.DevicePtr(16*n)
}

// takeSlot returns a free slot whose host memory holds n bytes and whose
// device buffer holds res bytes, creating or growing one as needed (under
// do: it allocates).
func (d *Device) takeSlot(n, res int) (*slot, error) {
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
		addr, err := mappedAddr(p)
		if err != nil {
			freePinned(p)
			d.putSlot(sl)
			return nil, err
		}
		freePinned(sl.host)
		sl.host, sl.hostAddr = p, addr
	}
	sl.host = sl.host[:n]
	if sl.res == nil || sl.res.cap < res {
		b, err := d.pool.get(res)
		if err != nil {
			d.putSlot(sl)
			return nil, err
		}
		if err := cu.MemsetD32Async(b.ptr, 0, 2, d.stream); err != nil {
			d.pool.put(b)
			d.putSlot(sl)
			return nil, fmt.Errorf("gpu: zero a compare's counters: %w", err)
		}
		d.pool.put(sl.res) // nothing queued uses a free slot's buffer
		sl.res = b
	}
	return sl, nil
}

// dropResult returns sl's device buffer to the pool after a failed
// compare, which may have left its counters nonzero; the slot's next use
// attaches and zeroes another (under do or locked: no driver call).
func (d *Device) dropResult(sl *slot) {
	d.pool.put(sl.res)
	sl.res = nil
}

// putSlot makes sl free again; nothing queued may still use it.
func (d *Device) putSlot(sl *slot) {
	d.slotMu.Lock()
	d.slots = append(d.slots, sl)
	d.slotMu.Unlock()
}

// wait blocks until ev has completed and reports the failure of any work
// queued before it. It runs on the caller's thread with the context
// current but outside the device's call queue, so other callers launch their
// work meanwhile: with several checks in flight (campaign workers share a
// Device) the GPU is not left idle for a round trip to the host per check.
func (d *Device) wait(ev cu.Event) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return fmt.Errorf("make the context current: %w", err)
	}
	if err := ev.Synchronize(); err != nil {
		return fmt.Errorf("wait for the queued work: %w", err)
	}
	return nil
}
