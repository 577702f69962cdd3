package external

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

func rmsBatch(t *testing.T, rows int) *target.Batch {
	t.Helper()
	c := testCase(spec.OpRMSNorm, spec.BF16, spec.BF16, spec.DistNormal, 3)
	c.Shape = spec.Shape{Rows: rows, Hidden: 64}
	b, err := inputs.Of(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkEcho checks that the misbehaving adapter's normal answer, y = x,
// arrived intact.
func checkEcho(t *testing.T, b *target.Batch, o *target.Output) {
	t.Helper()
	for i, v := range o.Values {
		if v != b.Input.(*oracle.RMSNormInput).X[i] {
			t.Fatalf("value %d: got %v, sent %v", i, v, b.Input.(*oracle.RMSNormInput).X[i])
		}
	}
}

// TestMisbehavingAdapters plants each way an adapter can fail on the 13-row
// batch (testdata/misbehave.py) and checks what the harness makes of it:
// a crash error naming the frame and field, a restart for the next batch,
// or, for an adapter's own error frame, an error without a restart.
func TestMisbehavingAdapters(t *testing.T) {
	tests := []struct {
		mode        string
		crash       bool // wraps target.ErrTargetCrashed
		unsupported bool // wraps ErrUnsupported
		restart     bool // the next batch needs a new process
		want        []string
	}{
		{mode: "crash", crash: true, restart: true, want: []string{"reply frame 2", "exit status 3", "boom: planted crash"}},
		{mode: "segv", crash: true, restart: true, want: []string{"reply frame 2", "egmentation fault"}}, // "signal: segmentation fault", or the shell's "Segmentation fault"
		{mode: "hang", crash: true, restart: true, want: []string{"reply frame 2", "no reply within 1s (hung)"}},
		{mode: "garbage", crash: true, restart: true, want: []string{"reply frame 2: length prefix:", "is not a frame length"}},
		{mode: "badjson", crash: true, restart: true, want: []string{"reply frame 2: header: not a JSON object"}},
		{mode: "dtype", crash: true, restart: true, want: []string{`reply frame 2: tensor "y": dtype BF16 expected, got F32`}},
		{mode: "shape", crash: true, restart: true, want: []string{`reply frame 2: tensor "y": shape [13 64] expected, got [12 64]`}},
		{mode: "seq", crash: true, restart: true, want: []string{`reply frame 2: field "seq": "9", want 2`}},
		{mode: "noy", crash: true, restart: true, want: []string{`reply frame 2: tensor "y": missing`}},
		{mode: "exception", crash: true, want: []string{"error frame 2", "the adapter failed: planted failure"}},
		{mode: "unsupported", unsupported: true, want: []string{"error frame 2", "13 rows are not supported"}},
		{mode: "stdout"},
		{mode: "huge", crash: true, restart: true, want: []string{"reply frame 2: length prefix: 8589934592 bytes announced, over the"}},
		{mode: "big", crash: true, restart: true, want: []string{"reply frame 2: length prefix:", "over the 70944 this request can produce"}},
		{mode: "exit", crash: true, restart: true, want: []string{"reply frame 2: EOF", "adapter exited with status 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			tg, err := New(adapterCmd(t, "fuzz/external/testdata/misbehave.py", tt.mode), spec.OpRMSNorm, Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			ctx := context.Background()
			ok4, ok5, bad := rmsBatch(t, 4), rmsBatch(t, 5), rmsBatch(t, 13)
			o, err := tg.Run(ctx, ok4, nil)
			if err != nil {
				t.Fatalf("frame 1: %v", err)
			}
			checkEcho(t, ok4, o)
			o, err = tg.Run(ctx, bad, nil)
			if got := errors.Is(err, target.ErrTargetCrashed); got != tt.crash {
				t.Fatalf("errors.Is(err, ErrTargetCrashed) = %v, want %v; err = %v", got, tt.crash, err)
			}
			if got := errors.Is(err, ErrUnsupported); got != tt.unsupported {
				t.Fatalf("errors.Is(err, ErrUnsupported) = %v, want %v; err = %v", got, tt.unsupported, err)
			}
			if err == nil {
				checkEcho(t, bad, o)
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("error %v\ndoes not say %q", err, w)
				}
			}
			o, err = tg.Run(ctx, ok5, []int{4, 1})
			if err != nil {
				t.Fatalf("the batch after the failure: %v", err)
			}
			if o.Rows[0] != 4 || o.Values[0] != ok5.Input.(*oracle.RMSNormInput).X[4*64] {
				t.Fatalf("rows %v: first value %v, want row 4's %v", o.Rows, o.Values[0], ok5.Input.(*oracle.RMSNormInput).X[4*64])
			}
			want := 1
			if tt.restart {
				want = 2
			}
			if got := tg.Starts(); got != want {
				t.Fatalf("adapter started %d times, want %d", got, want)
			}
		})
	}
}

// TestCancelIsNotACrash: a canceled context stops a hung adapter and
// returns the context's error, not a crash finding.
func TestCancelIsNotACrash(t *testing.T) {
	tg, err := New(adapterCmd(t, "fuzz/external/testdata/misbehave.py", "hang"), spec.OpRMSNorm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = tg.Run(ctx, rmsBatch(t, 13), nil)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, target.ErrTargetCrashed) {
		t.Fatalf("got %v, want the context's deadline error and no crash", err)
	}
	if _, err := tg.Run(context.Background(), rmsBatch(t, 4), nil); err != nil {
		t.Fatalf("after the cancel: %v", err)
	}
}

// TestHostileMemoryBound: a reply that announces 8 GiB costs the harness
// no allocation of that size: the frame is refused at its length prefix,
// and the whole exchange (adapter start, one good batch, the hostile one,
// the restart) allocates less than 4 MiB.
func TestHostileMemoryBound(t *testing.T) {
	tg, err := New(adapterCmd(t, "fuzz/external/testdata/misbehave.py", "huge"), spec.OpRMSNorm, Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ok4, bad := rmsBatch(t, 4), rmsBatch(t, 13)
	if _, err := tg.Run(context.Background(), ok4, nil); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = tg.Run(context.Background(), bad, nil)
	if !errors.Is(err, target.ErrTargetCrashed) {
		t.Fatalf("got %v, want a crash", err)
	}
	if _, err := tg.Run(context.Background(), ok4, nil); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("the hostile exchange allocated %d bytes, want < 4 MiB", got)
	} else {
		t.Logf("the hostile exchange and the restart allocated %d bytes", got)
	}
}

// TestHangAtHello: an adapter that never answers its hello is refused once
// the start timeout passes.
func TestHangAtHello(t *testing.T) {
	start := time.Now()
	_, err := New(adapterCmd(t, "fuzz/external/testdata/misbehave.py", "hellohang"), spec.OpRMSNorm, Options{StartTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "hello frame 0") || !strings.Contains(err.Error(), "no reply within 1s") {
		t.Fatalf("got %v, want a refusal naming the hello frame and the timeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("refused after %s, want about the 1 s start timeout", d)
	}
}

// TestStallRecorded: with no Timeout set, the timeout after fast answers is
// TimeoutFloor, and a run that ends while a request hangs records the
// stall.
func TestStallRecorded(t *testing.T) {
	tg, err := New(adapterCmd(t, "fuzz/external/testdata/misbehave.py", "hang"), spec.OpRMSNorm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if _, err := tg.Run(context.Background(), rmsBatch(t, 4), nil); err != nil {
		t.Fatal(err)
	}
	// fast answers give the floor; a loaded machine can make the hello
	// (Python's start and NumPy's import) slower than TimeoutFloor/TimeoutFactor.
	if got := tg.opts.timeout(tg.slowest); tg.slowest < TimeoutFloor/TimeoutFactor && got != TimeoutFloor {
		t.Errorf("adaptive timeout after answers of at most %s: %s, want the floor %s", tg.slowest, got, TimeoutFloor)
	} else if got != TimeoutFloor {
		t.Logf("the slowest answer took %s (a loaded machine): timeout %s", tg.slowest, got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), StallFloor+500*time.Millisecond)
	defer cancel()
	if _, err := tg.Run(ctx, rmsBatch(t, 13), nil); err == nil {
		t.Fatal("a hung request answered")
	}
	if s := tg.Stalled(); !strings.Contains(s, "reply frame 2 unanswered after") {
		t.Errorf("Stalled() = %q, want the unanswered request", s)
	}
}

// TestHandshakeFailures: New fails with the reason when the adapter cannot
// serve the op, does not start, or dies before its hello.
func TestHandshakeFailures(t *testing.T) {
	py := python(t)
	tests := []struct {
		name    string
		cmdline string
		op      spec.Op
		want    string
	}{
		{"op mismatch", adapterCmd(t, "adapters/numpy_ops.py", "rmsnorm"), spec.OpGEMM,
			`the adapter refused: this adapter was started for 'rmsnorm', the harness asked for 'gemm'`},
		{"no op", adapterCmd(t, "adapters/numpy_ops.py"), "", "the adapter refused: no op"},
		{"unknown op arg", adapterCmd(t, "adapters/numpy_ops.py", "softmax"), "", "unknown op 'softmax'"},
		{"exits", py + ` -c 'import sys; sys.stderr.write("cannot import torch\n"); sys.exit(1)'`, "", "cannot import torch"},
		{"not a command", "/nonexistent/adapter", "", "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, err := New(tt.cmdline, tt.op, Options{StartTimeout: 10 * time.Second})
			if err == nil {
				tg.Close()
				t.Fatal("New succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v\ndoes not say %q", err, tt.want)
			}
		})
	}
}

// TestHelloDeclarations: the target's Info is what the adapter declared
// (the NumPy attention reads the layout, its rmsnorm has none).
func TestHelloDeclarations(t *testing.T) {
	tg := numpyTarget(t, "", "attn_decode")
	info := tg.Info()
	if info.Name != "exec:numpy.attn_decode" || info.Op != spec.OpAttnDecode || info.Device != "process:cpu" ||
		!info.Invariant || info.Schedule != "tile=64 splits=1" || info.ULPBound != 0 || !info.Layouts {
		t.Fatalf("info %+v", info)
	}
	tg = numpyTarget(t, spec.OpRMSNorm)
	if got := tg.Info().Schedule; got != "threads=1 vec=1 warp=butterfly cross=sequential out=(x*rstd)*w" {
		t.Fatalf("rmsnorm schedule %q", got)
	}
	if tg.Info().Layouts {
		t.Fatal("the NumPy rmsnorm says it reads a layout")
	}
}
