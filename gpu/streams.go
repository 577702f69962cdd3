package gpu

import (
	"fmt"
	"sync/atomic"
)

// DefaultStreams is how many streams a GPU's campaign workers are spread
// over by default (SetStreams): on the H200 host (16 CPUs, 16 workers) a
// 60 s campaign over every cuda target checked 397 thousand cases on
// invariant targets with one, 452-488 thousand with 4, 566-645 thousand
// with 8 and 712-748 thousand with 16 (docs/performance.md, fifth
// session). A lane is made only when a worker first uses it, so a
// campaign of fewer workers makes fewer.
const DefaultStreams = 16

// MaxStreams bounds SetStreams: each stream's lane keeps its own pool of
// device buffers, 128 MiB of page-locked upload memory (once it uploads)
// and its own staging buffer.
const MaxStreams = 16

var streams atomic.Int32

func init() { streams.Store(DefaultStreams) }

// SetStreams sets how many streams of each GPU the campaign workers'
// checks are spread over: worker i's checks run on lane i mod n of the
// device (Device.Lane), each lane a stream with its own call queue, so n
// workers submit their launches and copies at once instead of one at a
// time. 1 puts every check on the context's default stream. Work of no
// campaign worker (shrinking, scans, replays) runs on lane 0.
func SetStreams(n int) error {
	if n < 1 || n > MaxStreams {
		return fmt.Errorf("gpu: %d streams: want 1 to %d", n, MaxStreams)
	}
	streams.Store(int32(n))
	return nil
}

// Streams returns the number SetStreams set (DefaultStreams unless set).
func Streams() int { return int(streams.Load()) }
