//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/target"
)

// A GPU's lanes are Devices that share its context and loaded modules but
// each have their own stream, call queue, buffer pool, compare slots,
// caches and upload memory. A campaign worker's checks run on one lane
// (forWorker), so several workers submit their launches and copies at once
// on their own OS threads: on the H200 host a drainer's host work (about
// 200 µs a check, 10 µs a driver call) was what limited a campaign, and
// the driver takes launches on separate streams from separate threads at
// 2.2 times the best one-thread rate with 4 threads and 2.9 times with 12,
// while threads sharing one stream get slower (gpu/probes/launches). Lane
// 0 is the Device Open returned, on the legacy default
// stream; lanes 1, 2, ... use non-blocking streams, so no lane's work
// waits on another's: a buffer, an output or a slot belongs to one lane
// and is only used there.

// Lane returns lane i of d's GPU, made on first use. A lane made is
// found without a lock (every check's Run asks for its lane).
func (d *Device) Lane(i int) (*Device, error) {
	r := d.root
	if i == 0 {
		return r, nil
	}
	if i < 0 || i >= MaxStreams {
		return nil, fmt.Errorf("gpu: lane %d: want 0 to %d", i, MaxStreams-1)
	}
	if l := r.lanes[i].Load(); l != nil {
		return l, nil
	}
	r.laneMu.Lock()
	defer r.laneMu.Unlock()
	if l := r.lanes[i].Load(); l != nil {
		return l, nil
	}
	l, err := r.newLane()
	if err != nil {
		return nil, fmt.Errorf("gpu: lane %d of %s: %w", i, r.name, err)
	}
	r.lanes[i].Store(l)
	return l, nil
}

// newLane makes a lane of r's GPU on a new non-blocking stream.
func (r *Device) newLane() (*Device, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cu.SetCurrentContext(r.ctx); err != nil {
		return nil, fmt.Errorf("make the context current: %w", err)
	}
	s, err := cu.MakeStream(cu.NonBlocking)
	if err != nil {
		return nil, fmt.Errorf("create a stream: %w", err)
	}
	return &Device{ctx: r.ctx, stream: s, root: r, name: r.name, ord: r.ord, sms: r.sms, cc: r.cc, fns: r.fns}, nil
}

// forWorker returns the lane the checks of ctx's campaign worker run on:
// lane worker mod Streams(), or d itself for work of no worker.
func (d *Device) forWorker(ctx context.Context) (*Device, error) {
	w, ok := target.Worker(ctx)
	n := Streams()
	if !ok || n <= 1 {
		return d, nil
	}
	return d.Lane(w % n)
}

// runRows runs kernel (under do) on the lane of ctx's worker of the
// default device, to fill o with the outputs of b's rows; a batch of no
// rows runs nothing. Its errors name target name and, for the kernel's,
// b's rows and shape.
func runRows(ctx context.Context, name string, b *ops.Rows, kernel func(d *Device) error) error {
	dev, err := Default()
	if err != nil {
		return fmt.Errorf("target %s: %w", name, err)
	}
	d, err := dev.forWorker(ctx)
	if err != nil {
		return fmt.Errorf("target %s: %w", name, err)
	}
	if b.Items() == 0 {
		return nil
	}
	if err := d.do(func() error { return kernel(d) }); err != nil {
		return fmt.Errorf("target %s: %d tokens at %s: %w", name, b.Items(), b.Shape, err)
	}
	return nil
}

// runRowsOp is Run of target name of a rows op: after ctx's error, a
// batch in that is not *ops.Rows (want says what it should hold) and
// op's columns for its shape, kernel, given the batch and its output,
// returns what runRows runs to fill that output (or why the target
// cannot run the batch).
func runRowsOp(ctx context.Context, name, want string, op ops.Op, in ops.Input, kernel func(b *ops.Rows, o *ops.Output) (func(d *Device) error, error)) (*ops.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, ok := in.(*ops.Rows)
	if !ok {
		return nil, fmt.Errorf("target %s: a batch of %T, want %s (*ops.Rows)", name, in, want)
	}
	cols, err := op.Columns(b.Shape)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	o := ops.NewOutput(cols, b.Items())
	k, err := kernel(b, o)
	if err != nil {
		return nil, err
	}
	if err := runRows(ctx, name, b, k); err != nil {
		return nil, err
	}
	return o, nil
}

// allLanes returns lane 0 and every lane made so far.
func (d *Device) allLanes() []*Device {
	r := d.root
	all := []*Device{r}
	for i := 1; i < MaxStreams; i++ {
		if l := r.lanes[i].Load(); l != nil {
			all = append(all, l)
		}
	}
	return all
}

// queueStats sums lockStats over the lanes: how long their queues were
// drained in all, and how many calls ran.
func (d *Device) queueStats() (time.Duration, int) {
	var held time.Duration
	var runs int
	for _, l := range d.allLanes() {
		h, n := l.lockStats()
		held, runs = held+h, runs+n
	}
	return held, runs
}
