package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// A scan of a user's kernel runs in a worker subprocess, so that a fault
// (an illegal address leaves the CUDA context unusable) or a hang ends the
// worker and not the scan: RunWorker starts the worker, sends it a
// WorkerRequest on stdin and reads its WorkerEvents from stdout; the
// worker (`bitparity worker --kernel M --scan`) runs Serve. Every batch
// the worker runs is announced before it runs (Options.Before), so a
// worker that dies, or says nothing for longer than the kernel's timeout
// while a batch runs, is a *Fault naming that batch.

// WorkerRequest is what RunWorker sends the worker.
type WorkerRequest struct {
	Spec spec.ScanSpec `json:"spec"`
	Env  spec.Env      `json:"env"`
}

// WorkerEvent is one JSON value the worker writes: a batch about to run
// (Draw, Step), progress (Done of Total steps), the result, or the error
// that ended the scan.
type WorkerEvent struct {
	Draw   spec.Dist `json:"draw,omitempty"`
	Step   string    `json:"step,omitempty"`
	Done   int       `json:"done,omitempty"`
	Total  int       `json:"total,omitempty"`
	Result *Result   `json:"result,omitempty"`
	Error  string    `json:"error,omitempty"`
	// BadSpec: the error is bad input (ErrBadSpec); Crashed: the target
	// faulted (target.ErrTargetCrashed).
	BadSpec bool `json:"bad_spec,omitempty"`
	Crashed bool `json:"crashed,omitempty"`
}

// Fault is a finding about the scanned target: the worker faulted or hung
// while it ran one batch, named by its draw and step.
type Fault struct {
	Target string
	Draw   spec.Dist
	Step   string // "rows = 17", "items alone (1..8192)"; "" before the first batch
	// Hang: the batch did not finish within Timeout and the worker was
	// killed.
	Hang    bool
	Timeout time.Duration
	// Err is the worker's error, or how it ended and the end of its stderr.
	Err string
}

func (f *Fault) Error() string {
	where := "before its first batch"
	if f.Step != "" {
		where = fmt.Sprintf("at draw %s, %s", f.Draw, f.Step)
	}
	if f.Hang {
		return fmt.Sprintf("%s hung %s: no answer in %s, the worker was killed", f.Target, where, f.Timeout)
	}
	return fmt.Sprintf("%s faulted %s: %s", f.Target, where, f.Err)
}

// Serve is the worker's side: it reads a WorkerRequest from r, runs the
// scan in this process (its target must be registered here) and writes
// its events to w, the last one the result or the error, which it also
// returns.
func Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	var req WorkerRequest
	if err := json.NewDecoder(r).Decode(&req); err != nil {
		return fmt.Errorf("scan worker: read the request: %w", err)
	}
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	emit := func(ev WorkerEvent) error {
		mu.Lock()
		defer mu.Unlock()
		return enc.Encode(ev)
	}
	opt := Options{Env: req.Env,
		Before:   func(d spec.Dist, step string) { emit(WorkerEvent{Draw: d, Step: step}) },
		Progress: func(done, total int) { emit(WorkerEvent{Done: done, Total: total}) },
	}
	res, err := Run(ctx, req.Spec, opt)
	if err != nil {
		emit(WorkerEvent{Error: err.Error(), BadSpec: errors.Is(err, ErrBadSpec), Crashed: errors.Is(err, target.ErrTargetCrashed)})
		return err
	}
	return emit(WorkerEvent{Result: res})
}

// RunWorker scans s in a worker started as argv (Serve on its side): the
// worker's progress goes to opt.Progress. A batch that faults, a worker
// that dies after announcing a batch, or one silent for longer than
// timeout while a batch runs is a *Fault. A bad spec wraps ErrBadSpec; a
// worker that fails otherwise (no GPU, a module that does not load) is an
// error with its message or the end of its stderr.
func RunWorker(ctx context.Context, argv []string, s spec.ScanSpec, opt Options, timeout time.Duration) (*Result, error) {
	if len(argv) == 0 {
		return nil, errors.New("scan: no worker command")
	}
	req, err := json.Marshal(WorkerRequest{Spec: s, Env: opt.Env})
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(req)
	var stderr tailBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("scan: worker: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("scan: start the worker %s: %w", argv[0], err)
	}
	events := make(chan WorkerEvent)
	go func() {
		defer close(events)
		dec := json.NewDecoder(out)
		for {
			var ev WorkerEvent
			if dec.Decode(&ev) != nil {
				return
			}
			events <- ev
		}
	}()
	fault := &Fault{Target: s.Target, Timeout: timeout}
	var res *Result
	var last WorkerEvent // the last batch announced, and the worker's error
	// timer runs while a batch is in flight: from its announcement to the
	// next event (the worker waits for every batch of a user kernel).
	timer := time.NewTimer(timeout)
	timer.Stop()
	kill := func() {
		cmd.Process.Kill()
		for range events { // drain, so the reader ends
		}
		cmd.Wait()
	}
loop:
	for {
		select {
		case <-ctx.Done():
			kill()
			return nil, fmt.Errorf("scan: %w", ctx.Err())
		case <-timer.C:
			kill()
			fault.Draw, fault.Step, fault.Hang = last.Draw, last.Step, true
			return nil, fault
		case ev, ok := <-events:
			if !ok {
				break loop
			}
			timer.Stop()
			switch {
			case ev.Result != nil:
				res = ev.Result
			case ev.Error != "":
				last.Error, last.BadSpec, last.Crashed = ev.Error, ev.BadSpec, ev.Crashed
			case ev.Step != "":
				last.Draw, last.Step = ev.Draw, ev.Step
				if timeout > 0 {
					timer.Reset(timeout)
				}
			case opt.Progress != nil:
				opt.Progress(ev.Done, ev.Total)
			}
		}
	}
	werr := cmd.Wait()
	ended := fmt.Sprintf("the worker ended (%v) without an answer", werr)
	if t := strings.TrimSpace(stderr.String()); t != "" {
		ended += ": " + t
	}
	switch {
	case res != nil && werr == nil:
		return res, nil
	case last.BadSpec:
		return nil, fmt.Errorf("%w: %s", ErrBadSpec, strings.TrimPrefix(last.Error, ErrBadSpec.Error()+": "))
	case last.Crashed:
		fault.Draw, fault.Step, fault.Err = last.Draw, last.Step, last.Error
		return nil, fault
	case last.Error != "":
		return nil, fmt.Errorf("scan worker: %s", last.Error)
	case last.Step != "":
		fault.Draw, fault.Step, fault.Err = last.Draw, last.Step, ended
		return nil, fault
	}
	return nil, fmt.Errorf("scan worker: %s", ended)
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
