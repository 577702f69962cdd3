package lifecycle

import (
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a strings.Builder safe for the signal goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStopOnSignalWorker: a --procs worker (worker true)'s first SIGTERM stops the run,
// and the repeats Linux sends as its dying parent's threads exit do not
// end it (which would lose the result it is writing); the stop says so.
func TestStopOnSignalWorker(t *testing.T) {
	var log lockedBuffer
	ctx, stop := StopOnSignal(&log, true)
	defer stop()
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM did not stop the run")
	}
	for k := 1; k <= 3; k++ { // one at a time: signals sent while one is pending merge
		syscall.Kill(os.Getpid(), syscall.SIGTERM) // an os.Exit here ends the test binary: the test fails
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) && strings.Count(log.String(), "still stopping") < k {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if got := log.String(); !strings.Contains(got, "terminated: stopping") || strings.Count(got, "still stopping") != 3 {
		t.Fatalf("stderr:\n%s\nwant the stop and three repeats taken as it", got)
	}
}
