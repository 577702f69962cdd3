package main

import (
	"fmt"
	"io"
	"time"

	"github.com/bitparity/bitparity/fuzz/external"
)

// endWait bounds how long the end of a run waits on its process targets
// (--exec, --kernel, --isolate). A target whose reader never returns (an
// adapter's detached helper keeps its stdout open after the adapter was
// killed) holds the target's lock; asking it for its stall or closing it
// would then wait for ever, and the run's result, already recorded, would
// never be written. Past endWait the run goes on without it.
const endWait = 3 * time.Second

// processStalls is external.Stalls, waited for at most endWait; past it
// the stall says a process target is still blocked in a request.
func processStalls() []string {
	ch := make(chan []string, 1)
	go func() { ch <- external.Stalls() }()
	select {
	case s := <-ch:
		return s
	case <-time.After(endWait):
		return []string{fmt.Sprintf("a process target was still blocked in a request %s after the run ended", endWait)}
	}
}

// closeProcesses is external.CloseAll, waited for at most endWait: a
// target that does not close does not hold the command's exit (an
// adapter still running then gets SIGKILL from the kernel when this
// process exits, PR_SET_PDEATHSIG).
func closeProcesses(stderr io.Writer) {
	done := make(chan struct{})
	go func() {
		external.CloseAll()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(endWait):
		fmt.Fprintf(stderr, "bitparity: a process target did not close within %s; exiting without it\n", endWait)
	}
}
