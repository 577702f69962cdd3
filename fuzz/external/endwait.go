package external

import (
	"fmt"
	"io"
	"time"
)

// EndWait bounds how long the end of a run waits on its process targets
// (--exec, --kernel, --isolate). A target whose reader never returns (an
// adapter's detached helper keeps its stdout open after the adapter was
// killed) holds the target's lock; asking it for its stall or closing it
// would then wait for ever, and the run's result, already recorded, would
// never be written. Past EndWait the run goes on without it.
const EndWait = 3 * time.Second

// StallsWithin is Stalls, waited for at most EndWait; past it the stall
// says a process target is still blocked in a request.
func StallsWithin() []string {
	ch := make(chan []string, 1)
	go func() { ch <- Stalls() }()
	select {
	case s := <-ch:
		return s
	case <-time.After(EndWait):
		return []string{fmt.Sprintf("a process target was still blocked in a request %s after the run ended", EndWait)}
	}
}

// CloseAllWithin is CloseAll, waited for at most EndWait, saying on log
// when a target did not close: it does not hold the command's exit (an
// adapter still running then gets SIGKILL from the kernel when the
// command exits, PR_SET_PDEATHSIG).
func CloseAllWithin(log io.Writer) {
	done := make(chan struct{})
	go func() {
		CloseAll()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(EndWait):
		fmt.Fprintf(log, "bitparity: a process target did not close within %s; exiting without it\n", EndWait)
	}
}
