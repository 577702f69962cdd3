package external

import (
	"errors"
	"os"
	"testing"
	"time"
)

// TestStopClosesStdout: stop releases the read end of the adapter's stdout
// pipe whether the adapter exits within the grace period or is killed, so
// restarting adapters does not leak file descriptors.
func TestStopClosesStdout(t *testing.T) {
	for _, tc := range []struct{ name, cmdline string }{
		{"exits at end of input", "cat >/dev/null"},
		{"ignores end of input", "trap '' TERM; while :; do sleep 1; done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := startProcess(tc.cmdline, "", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			p.stop(200 * time.Millisecond)
			if _, err := p.outFile.Stat(); !errors.Is(err, os.ErrClosed) {
				t.Errorf("stdout pipe after stop: Stat error %v, want %v (the descriptor leaks)", err, os.ErrClosed)
			}
		})
	}
}
