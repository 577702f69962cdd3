package external

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one running adapter: its pipes, a copy of the last bytes it
// wrote to stderr, and the reason it was killed, if it was.
//
// A read of its stdout or stderr never outlives it: a descendant that left
// its process group (setsid) may hold both pipes open forever, so ending
// the process ends the reads by deadline (endRead), not by end of file.
type process struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  *bufio.Reader
	outFile *os.File
	errFile *os.File
	tail    *tailBuffer

	stderrDone chan struct{}
	waitDone   chan struct{}
	waitErr    error

	mu     sync.Mutex
	killed string    // why the harness killed it ("" while it lives)
	outEnd time.Time // the deadline of reads of stdout (zero: none)
	errEnd time.Time // the deadline of reads of stderr (zero: none)
}

// exitDrain is how long reads go on after the adapter exited on its own:
// what it wrote before its exit is already in the pipes (a writer blocks
// until its data is read, so at most a pipe's buffer waits there) and
// takes microseconds to read.
const exitDrain = time.Second

// startProcess runs cmdline with /bin/sh -c in dir (the current directory
// when empty), in its own process group, with env appended to the
// harness's environment. Its stderr is kept (the last tailSize bytes) and,
// when log is not nil, copied there.
func startProcess(cmdline, dir string, env []string, log io.Writer) (*process, error) {
	cmd := exec.Command("/bin/sh", "-c", cmdline)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	setProcAttr(cmd)
	// Our own pipes: exec.Cmd would close its pipes in Wait, possibly
	// before a reply already written has been read.
	var files []*os.File // all six ends, closed on failure
	pipe := func() (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err == nil {
			files = append(files, r, w)
			growPipe(w)
		}
		return r, w, err
	}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("start %q: %w", cmdline, err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	stdin := inW
	p := &process{
		cmd:        cmd,
		stdin:      stdin,
		outFile:    outR,
		errFile:    errR,
		stdout:     bufio.NewReaderSize(outR, 1<<20),
		tail:       &tailBuffer{max: tailSize},
		stderrDone: make(chan struct{}),
		waitDone:   make(chan struct{}),
	}
	go func() {
		defer close(p.stderrDone)
		defer errR.Close()
		var w io.Writer = p.tail
		if log != nil {
			w = io.MultiWriter(p.tail, log)
		}
		io.Copy(w, errR)
	}()
	go func() {
		p.waitErr = cmd.Wait()
		at := time.Now().Add(exitDrain)
		p.mu.Lock()
		endRead(p.outFile, &p.outEnd, at)
		endRead(p.errFile, &p.errEnd, at)
		p.mu.Unlock()
		close(p.waitDone)
	}()
	return p, nil
}

// kill ends the process group (once), records why, and ends any read of
// its stdout at once (a reply after a kill is not read); its stderr is
// read until exitDrain after the exit, for the error message.
func (p *process) kill(why string) {
	p.mu.Lock()
	if p.killed == "" {
		p.killed = why
	}
	endRead(p.outFile, &p.outEnd, time.Now())
	p.mu.Unlock()
	killGroup(p.cmd)
	p.stdin.Close()
}

// endRead sets f's read deadline to at, unless *end, its deadline so far,
// is earlier, so that a read of a pipe that a descendant holds open
// (it left the process group with setsid) cannot outlive the adapter:
// such a read ends with os.ErrDeadlineExceeded, not io.EOF.
func endRead(f *os.File, end *time.Time, at time.Time) {
	if !end.IsZero() && end.Before(at) {
		return
	}
	*end = at
	f.SetReadDeadline(at)
}

func (p *process) killReason() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killed
}

// stop closes stdin (an adapter exits at end of input), waits up to grace,
// then kills the group, and waits for the exit.
func (p *process) stop(grace time.Duration) {
	defer p.outFile.Close()
	p.stdin.Close()
	select {
	case <-p.waitDone:
		return
	case <-time.After(grace):
	}
	p.kill("stopped")
	p.wait(5 * time.Second)
}

// discard kills the process, waits for it and describes how it ended.
func (p *process) discard(why string) string {
	p.kill(why)
	st := p.wait(5 * time.Second)
	p.outFile.Close()
	return st
}

// wait waits up to d for the process to exit and describes how it ended.
func (p *process) wait(d time.Duration) string {
	select {
	case <-p.waitDone:
	case <-time.After(d):
		return "still running"
	}
	select { // let the stderr copy finish, for the error message
	case <-p.stderrDone:
	case <-time.After(time.Second):
	}
	if p.waitErr == nil {
		return "exited with status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	return p.waitErr.Error()
}

// exchange writes req and reads one reply frame of at most limit bytes
// under a watchdog: when timeout passes or ctx ends first, the process is
// killed, which ends the read at once (kill), whoever holds the pipe; an
// adapter that exits on its own ends it exitDrain later at the latest.
// name names the reply ("reply frame 3") in errors.
func (p *process) exchange(ctx context.Context, req *frame, buf []byte, name string, timeout time.Duration, limit uint64) (*frame, []byte, error) {
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() { p.kill(fmt.Sprintf("no reply within %v (hung)", timeout)) })
		defer t.Stop()
	}
	stop := context.AfterFunc(ctx, func() { p.kill("canceled: " + context.Cause(ctx).Error()) })
	defer stop()
	if err := writeFrame(p.stdin, req); err != nil {
		if errors.Is(err, syscall.EPIPE) { // it ended before reading the request
			return nil, buf, fmt.Errorf("%s: the adapter exited without answering (writing the request: %w)", name, err)
		}
		return nil, buf, fmt.Errorf("%s: writing the request: %w", strings.Replace(name, "reply", "request", 1), err)
	}
	rep, buf, err := readFrame(p.stdout, buf, name, limit)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if p.killReason() != "" {
			err = fmt.Errorf("%s: unanswered", name)
		} else {
			err = fmt.Errorf("%s: the adapter exited without answering, and a process it started outside its process group still holds its stdout open", name)
		}
	}
	return rep, buf, err
}

// tailSize is how much of an adapter's stderr an error message shows.
const tailSize = 8 << 10

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
