//go:build cuda

package gpu

import (
	"sync"
	"testing"
)

// TestCallQueue runs many goroutines' calls through one device's queue
// (host calls only: no context is needed): the calls never overlap, each
// goroutine's run in the order it submitted them, every call runs once,
// drainers hand the queue on (more calls than drainMax), and a panic
// reaches the caller whose call panicked, not the drainer.
func TestCallQueue(t *testing.T) {
	d := &Device{}
	d.root = d
	const goroutines, each = 32, 400
	var running, total int // touched only inside calls
	overlap := false
	last := make([]int, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				d.locked(func() {
					running++
					if running != 1 || last[g] != i {
						overlap = true
					}
					last[g] = i + 1
					total++
					running--
				})
			}
		}()
	}
	wg.Wait()
	if overlap {
		t.Error("calls overlapped or ran out of their caller's order")
	}
	if total != goroutines*each {
		t.Errorf("%d calls ran, want %d", total, goroutines*each)
	}
	if _, runs := d.lockStats(); runs != goroutines*each {
		t.Errorf("lockStats counts %d calls, want %d", runs, goroutines*each)
	}
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the call's panic", p)
			}
		}()
		d.locked(func() { panic("boom") })
	}()
	ran := false
	d.locked(func() { ran = true })
	if !ran {
		t.Error("the queue did not run a call after a panic")
	}
}
