package external

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// detachedAdapter is the command line of testdata/detached.sh with args,
// and a log of its stderr; the helpers it started (in sessions of their
// own, out of the kill's reach) are killed when the test ends.
func detachedAdapter(t *testing.T, args ...string) (string, *lockedLog) {
	t.Helper()
	cmd := "sh " + spec.ShellQuote(filepath.Join(repoRoot(t), "fuzz/external/testdata/detached.sh"))
	for _, a := range args {
		cmd += " " + spec.ShellQuote(a)
	}
	log := &lockedLog{}
	t.Cleanup(func() {
		for _, f := range strings.Fields(log.String()) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return cmd, log
}

// lockedLog is an adapter's stderr, written by the copying goroutine.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDetachedHelperHoldsStdout: an adapter whose helper left its process
// group (setsid) and keeps stdout open for 30 s holds a request no longer
// than the harness's bound: a hang ends at the request timeout, an exit
// without an answer within a second or two, a canceled context at once,
// and Close returns at once after each. On a harness that waits for end of
// file, each waits the helper's 30 s.
func TestDetachedHelperHoldsStdout(t *testing.T) {
	tests := []struct {
		mode    string
		timeout time.Duration // Options.Timeout
		cancel  time.Duration // the context's end, when not zero
		within  time.Duration
		want    string
	}{
		{"hang", time.Second, 0, 4 * time.Second, "reply frame 1: unanswered (no reply within 1s (hung))"},
		// An adapter that exits before the request is written is told by
		// the broken pipe, one that exits after by its held stdout: both
		// end within the bound and say it exited without answering.
		{"exit", time.Minute, 0, 4 * time.Second, "reply frame 1: the adapter exited without answering"},
		{"hang", time.Minute, 300 * time.Millisecond, 3 * time.Second, context.DeadlineExceeded.Error()},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s cancel=%v", tt.mode, tt.cancel), func(t *testing.T) {
			t.Parallel()
			cmd, log := detachedAdapter(t, tt.mode)
			tg, err := New(cmd, spec.OpRMSNorm, Options{Timeout: tt.timeout, Stderr: log})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tt.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.cancel)
				defer cancel()
			}
			start := time.Now()
			done := make(chan error, 1)
			go func() {
				_, err := tg.Run(ctx, rmsBatch(t, 4), nil)
				tg.Close()
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(tt.within):
				t.Fatalf("Run and Close still blocked after %s (the helper holds stdout); stderr:\n%s", tt.within, log)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("after %s: error %v\nwant one saying %q", time.Since(start).Round(time.Millisecond), err, tt.want)
			}
			if !strings.Contains(log.String(), "helper pid") {
				t.Fatalf("the adapter started no helper; stderr:\n%s", log)
			}
		})
	}
}

// TestHelloDeclarationsBounded: the hello is refused, naming the field,
// when its name cannot name a target (and so the cases of its findings)
// or its ulp_bound is larger than a bound can mean; the largest bound
// allowed is taken.
func TestHelloDeclarationsBounded(t *testing.T) {
	long := strings.Repeat("a", 5000)
	tests := []struct {
		name, bound string
		want        string // "" when the hello is taken
	}{
		{"has space", "", `hello frame 0: field "name": "has space" (9 bytes) cannot name a target`},
		{long, "", `hello frame 0: field "name": "` + long[:64] + `..." (5000 bytes) cannot name a target`},
		{"ok", "18446744073709551615", `hello frame 0: field "ulp_bound": 18446744073709551615 ulps is no bound: at most 31742`},
		{"ok", "31743", `field "ulp_bound": 31743 ulps is no bound`},
		{"ok", "-1", `field "ulp_bound": "-1" is not an unsigned integer`},
		{"ok", "31742", ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%.20s %s", tt.name, tt.bound), func(t *testing.T) {
			t.Parallel()
			cmd, _ := detachedAdapter(t, "hello", tt.name, tt.bound)
			tg, err := New(cmd, spec.OpRMSNorm, Options{StartTimeout: 10 * time.Second})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer tg.Close()
				if got := tg.Info().ULPBound; got != 31742 {
					t.Fatalf("ULPBound %d, want 31742", got)
				}
				return
			}
			if err == nil {
				tg.Close()
				t.Fatalf("hello taken: %+v", tg.Info())
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant one saying %s", err, tt.want)
			}
		})
	}
}
