//go:build cuda

package gpu

import (
	"fmt"

	"gorgonia.org/cu"
)

// fanStreams is how many side streams fanOut spreads its launches over.
// A scan's rows alone are 8192 launches of one block each on the H200's
// 132 multiprocessors: one after another on one stream, each waits for the
// last to end (a few µs of a single warp's latency each); 16 streams let
// 16 run at once, well under the GPU's 128 concurrent kernels.
const fanStreams = 16

// fan is a lane's side streams: each with the event recorded after its
// last launch of a fan-out, and the event the lane's stream records before
// one, which they wait for.
type fan struct {
	streams []cu.Stream
	done    []cu.Event
	start   cu.Event
}

// sides returns the lane's side streams, making them on first use (under
// do: the context is current).
func (d *Device) sides() (*fan, error) {
	if d.fan != nil {
		return d.fan, nil
	}
	f := &fan{}
	var err error
	if f.start, err = cu.MakeEvent(cu.DisableTiming); err != nil {
		return nil, fmt.Errorf("gpu: fan-out event: %w", err)
	}
	for range fanStreams {
		s, err := cu.MakeStream(cu.NonBlocking)
		if err != nil {
			return nil, fmt.Errorf("gpu: fan-out stream: %w", err)
		}
		e, err := cu.MakeEvent(cu.DisableTiming)
		if err != nil {
			return nil, fmt.Errorf("gpu: fan-out event: %w", err)
		}
		f.streams, f.done = append(f.streams, s), append(f.done, e)
	}
	d.fan = f
	return f, nil
}

// fanOut queues launch(i, s) for i = 0..n-1, launch i on side stream
// i mod min(n, width, fanStreams), after everything queued on the lane's
// stream so far, and queues on the lane's stream a wait for every side
// stream used, so work queued on the lane's stream later sees every
// launch done, as if it had been queued there. Launches on different
// streams must be independent of each other (each writes only its own
// outputs): they run at once on the GPU; launches on one stream run in
// order (under do). On an error the launches already queued are still
// waited for by the lane's stream.
func (d *Device) fanOut(n, width int, launch func(i int, s cu.Stream) error) error {
	if n == 0 {
		return nil
	}
	f, err := d.sides()
	if err != nil {
		return err
	}
	if err := f.start.Record(d.stream); err != nil {
		return fmt.Errorf("gpu: fan-out: record the start: %w", err)
	}
	used := min(n, width, len(f.streams))
	for _, s := range f.streams[:used] {
		if err := s.Wait(f.start, 0); err != nil {
			return fmt.Errorf("gpu: fan-out: wait for the start: %w", err)
		}
	}
	var first error
	for i := range n {
		if first = launch(i, f.streams[i%used]); first != nil {
			break
		}
	}
	for k, s := range f.streams[:used] {
		if err := f.done[k].Record(s); err != nil {
			return fmt.Errorf("gpu: fan-out: record the end of stream %d: %w", k, err)
		}
		if err := d.stream.Wait(f.done[k], 0); err != nil {
			return fmt.Errorf("gpu: fan-out: wait for stream %d: %w", k, err)
		}
	}
	return first
}
