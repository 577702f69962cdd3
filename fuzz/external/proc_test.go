package external

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
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

// TestStartCanceled: an adapter that never answers its hello holds a start
// only until the context ends: canceled 200 ms in, the start returns
// within a second (the process group killed), well before its start bound.
func TestStartCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	tg, err := NewContext(ctx, "sleep 1000", spec.OpRMSNorm, Options{StartTimeout: time.Minute})
	took := time.Since(start)
	if err == nil {
		tg.Close()
		t.Fatal("a silent adapter started")
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "hello frame 0") {
		t.Errorf("error %v: want one naming the hello and wrapping context.Canceled", err)
	}
	if took > 200*time.Millisecond+time.Second {
		t.Errorf("the canceled start returned after %s, want within 1 s of the cancel", took)
	}
}
