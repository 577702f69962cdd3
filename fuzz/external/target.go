package external

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// ErrUnsupported is wrapped by Run's error when the adapter declined a
// batch it does not implement (an "error" frame of kind "unsupported", for
// example fp16 inputs to an adapter that only takes bf16). It is not a
// crash: the process stays up and the case is skipped.
var ErrUnsupported = target.ErrUnsupported

// Options configure an external target. The zero value is valid.
type Options struct {
	// Name is the target's name in reports; "exec:" + the adapter's
	// declared name when empty.
	Name string
	// Timeout bounds one request (write, compute, reply). When zero it
	// adapts: TimeoutFactor times the slowest answer so far (the hello
	// included), at least TimeoutFloor. A request that takes longer is a
	// hang: the process is killed and Run returns an error wrapping
	// target.ErrTargetCrashed.
	Timeout time.Duration
	// StartTimeout bounds the start and the handshake; DefaultStartTimeout
	// when zero (importing torch and initialising CUDA takes seconds). A
	// canceled context ends a start at once, whatever this bound.
	StartTimeout time.Duration
	// Dir is the adapter's working directory; the harness's when empty.
	Dir string
	// Env is added to the harness's environment ("KEY=value").
	Env []string
	// Stderr receives a copy of the adapter's stderr (its log); nil keeps
	// only the last 8 KiB, which errors quote.
	Stderr io.Writer
	// Procs is how many processes of the adapter a path scan spreads its
	// KV cuts over (Target.Procs, Target.Clone); 0: AutoProcs.
	Procs int
	// Prestart has AddAll start the Procs-1 further processes with the
	// first, all at once, for Clone to hand out (a path scan's).
	Prestart bool
}

// TimeoutFloor and TimeoutFactor make the adaptive request timeout (see
// Options.Timeout); StallFloor is the least time a request must have gone
// unanswered when the run ends to count as a stall (Target.Stalled).
const (
	TimeoutFloor  = 10 * time.Second
	TimeoutFactor = 20
	StallFloor    = 2 * time.Second
	// DefaultStartTimeout bounds a start and its handshake when
	// Options.StartTimeout is zero (`run --exec-start-timeout`).
	DefaultStartTimeout = 2 * time.Minute
)

// timeout is the bound of the next request: Options.Timeout, or
// max(TimeoutFloor, TimeoutFactor x slowest answer so far).
func (o Options) timeout(slowest time.Duration) time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return max(TimeoutFloor, TimeoutFactor*slowest)
}

func (o Options) startTimeout() time.Duration {
	if o.StartTimeout > 0 {
		return o.StartTimeout
	}
	return DefaultStartTimeout
}

// Target is an op implemented by an external process that speaks the
// bitparity process protocol (docs/protocol.md). The process is started
// once and reused for every batch; when it crashes, hangs or answers
// garbage, Run returns an error wrapping target.ErrTargetCrashed and the next
// Run starts a fresh process. Run calls are serialized.
type Target struct {
	cmdline string
	op      spec.Op
	opts    Options
	info    target.Info
	hello   map[string]string

	mu       sync.Mutex
	proc     *process
	seq      int // frames sent to the current process; hello is frame 0
	starts   int
	scratch  []byte        // request tensor bytes, reused
	replyBuf []byte        // reply frame bytes, reused
	slowest  time.Duration // the slowest answer so far (hello included)
	slowReq  time.Duration // the slowest answer to a request
	stall    string        // why the run ended with a request unanswered
	held     *heldBatch    // the batch the adapter holds for a scan (scan.go)
	against  int           // step batches answered against the items alone (scan.go)
	spares   *spares       // processes started with this one for Clone (clone.go), or nil
}

var _ target.Target = (*Target)(nil)

// New is NewContext with a context that is never canceled.
func New(cmdline string, op spec.Op, opts Options) (*Target, error) {
	return NewContext(context.Background(), cmdline, op, opts)
}

// NewContext starts cmdline (run by /bin/sh -c), performs the handshake
// and returns the target. op may be empty: the target then runs the op the
// adapter names in its hello. The adapter's declared schedule must be one
// target.ParseSchedule reads. When ctx ends before the hello comes (Ctrl-C
// during a stuck start), the process group is killed at once and the error
// wraps ctx's. Close ends the process.
func NewContext(ctx context.Context, cmdline string, op spec.Op, opts Options) (*Target, error) {
	if strings.TrimSpace(cmdline) == "" {
		return nil, errors.New("external target: empty command line")
	}
	if opts.Procs < 0 || opts.Procs > MaxProcs {
		return nil, fmt.Errorf("external target %q: %d processes of it for a path scan (--exec-procs): want 1 to %d, or 0 for one per two CPU cores", cmdline, opts.Procs, MaxProcs)
	}
	t := &Target{cmdline: cmdline, op: op, opts: opts}
	if err := t.start(ctx); err != nil {
		return nil, fmt.Errorf("external target %q: %w", cmdline, err)
	}
	h := t.hello
	t.op = spec.Op(h["op"])
	bound, _ := helloULPBound(h) // checkHello refused a bad one
	if op, ok := wireOp(t.op); ok {
		if err := op.CheckPolicy(h["schedule"]); err != nil {
			t.Close()
			return nil, fmt.Errorf("external target %q: hello frame 0: field \"schedule\": %w", cmdline, err)
		}
	} else if s := h["schedule"]; s != "" {
		if _, err := target.ParseSchedule(t.op, s); err != nil {
			t.Close()
			return nil, fmt.Errorf("external target %q: hello frame 0: field \"schedule\": %w", cmdline, err)
		}
	}
	name := opts.Name
	if name == "" {
		name = "exec:" + h["name"]
	}
	dev := "process"
	if d := h["device"]; d != "" {
		dev += ":" + d
	}
	t.info = target.Info{
		Name:      name,
		Op:        t.op,
		Device:    dev,
		Invariant: h["invariant"] == "true",
		Schedule:  h["schedule"],
		ULPBound:  bound,
		Layouts:   h["layout"] == "true",
		Models:    fmt.Sprintf("external process %q (adapter %s: %s)", cmdline, h["name"], h["about"]),
	}
	return t, nil
}

// Stalled says why the target stopped answering, when a request was still
// unanswered when its context ended (the run's deadline came before the
// timeout could make it a crash) after max(StallFloor, TimeoutFactor/2 x
// the slowest answer to a request); "" otherwise.
func (t *Target) Stalled() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stall
}

// Info describes the target as the adapter declared it in its hello.
func (t *Target) Info() target.Info { return t.info }

// Hello returns the adapter's hello metadata (name, op, device, invariant,
// schedule, ulp_bound, about and any extra fields it sent).
func (t *Target) Hello() map[string]string {
	m := make(map[string]string, len(t.hello))
	for k, v := range t.hello {
		m[k] = v
	}
	return m
}

// Starts returns how many times the adapter process was started (1 plus
// the restarts after crashes).
func (t *Target) Starts() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.starts
}

// Close ends the adapter: it closes its stdin (an adapter exits at end of
// input) and kills it if it has not exited within 2 seconds.
func (t *Target) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.proc != nil {
		t.proc.stop(2 * time.Second)
		t.proc = nil
	}
	return nil
}

// start starts the process and performs the handshake (t.mu held or not
// yet shared). A canceled ctx kills the process and returns an error
// wrapping ctx's.
func (t *Target) start(ctx context.Context) error {
	p, err := startProcess(t.cmdline, t.opts.Dir, t.opts.Env, t.opts.Stderr)
	if err != nil {
		return err
	}
	t.starts++
	t.seq = 0
	req := &frame{meta: map[string]string{
		"frame":    "hello",
		"protocol": strconv.Itoa(ProtocolVersion),
		"seq":      "0",
		"op":       string(t.op),
	}}
	t0 := time.Now()
	rep, buf, err := p.exchange(ctx, req, t.replyBuf, "hello frame 0", t.opts.startTimeout(), helloLimit)
	t.replyBuf = buf
	t.slowest = max(t.slowest, time.Since(t0))
	if err != nil && ctx.Err() != nil {
		p.discard("canceled")
		return fmt.Errorf("hello frame 0: start canceled after %s: %w", time.Since(t0).Round(time.Millisecond), context.Cause(ctx))
	}
	if err == nil {
		err = checkHello(rep, t.op)
	}
	if err != nil {
		return t.failed(p, err)
	}
	if t.hello == nil {
		t.hello = rep.meta
	} else if rep.meta["op"] != t.hello["op"] || rep.meta["name"] != t.hello["name"] {
		p.discard("changed identity")
		return fmt.Errorf("hello frame 0: restarted adapter says op %q name %q, first start said op %q name %q",
			rep.meta["op"], rep.meta["name"], t.hello["op"], t.hello["name"])
	}
	t.proc = p
	return nil
}

func checkHello(rep *frame, op spec.Op) error {
	bad := func(field, format string, a ...any) error {
		return &frameError{frame: "hello frame 0", field: field, msg: fmt.Sprintf(format, a...)}
	}
	m := rep.meta
	if m["frame"] == "error" {
		return fmt.Errorf("hello frame 0: the adapter refused: %s", m["message"])
	}
	if m["frame"] != "hello" {
		return bad(`field "frame"`, "%q, want \"hello\"", m["frame"])
	}
	if m["protocol"] != strconv.Itoa(ProtocolVersion) {
		return bad(`field "protocol"`, "adapter speaks version %q, this harness speaks %d", m["protocol"], ProtocolVersion)
	}
	got := spec.Op(m["op"])
	known := got == HelloModel && (op == "" || op == HelloModel) // a model route
	for _, o := range spec.Ops {
		known = known || o == got
	}
	_, opPackage := wireOp(got)
	known = known || opPackage
	if !known {
		return bad(`field "op"`, "unknown op %q", m["op"])
	}
	if op != "" && got != op {
		return bad(`field "op"`, "adapter runs %q, the harness asked for %q", got, op)
	}
	if m["name"] == "" {
		return bad(`field "name"`, "missing")
	}
	if !spec.ValidName("exec:" + m["name"]) {
		return bad(`field "name"`, "%q (%d bytes) cannot name a target: \"exec:NAME\" must be 1..%d printable ASCII characters without spaces, as the cases of its findings name it",
			truncate(m["name"]), len(m["name"]), spec.MaxNameLen)
	}
	if b, err := helloULPBound(m); err != nil {
		return bad(`field "ulp_bound"`, "%v", err)
	} else if opPackage && b != 0 {
		return bad(`field "ulp_bound"`, "%d: op %s is compared bitwise (declare its policy in \"schedule\"), no ulp bound", b, got)
	}
	if l := m["layout"]; l != "" && l != "true" && l != "false" {
		return bad(`field "layout"`, "%q, want \"true\" or \"false\"", truncate(l))
	}
	return nil
}

// helloULPBound is the hello's ulp_bound: 0 when absent, else a decimal
// that target.CheckULPBound accepts.
func helloULPBound(m map[string]string) (uint64, error) {
	s := m["ulp_bound"]
	if s == "" {
		return 0, nil
	}
	b, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an unsigned integer", truncate(s))
	}
	if err := target.CheckULPBound(b); err != nil {
		return 0, err
	}
	return b, nil
}

// truncate shortens a hostile string for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// failed discards p after err and returns err with the process's end and
// the tail of its stderr; a hang or an early exit is reported as such.
func (t *Target) failed(p *process, err error) error {
	why := p.killReason()
	status := p.discard("protocol error")
	if why != "" && !strings.HasPrefix(why, "canceled") {
		err = fmt.Errorf("%w (%s)", err, why)
	}
	msg := fmt.Sprintf("%v; adapter %s", err, status)
	if tail := strings.TrimSpace(p.tail.String()); tail != "" {
		msg += "; its stderr ends with:\n" + indent(tail)
	}
	return &procError{msg: msg, err: err}
}

// procError carries the process context of a failure and unwraps to the
// underlying error.
type procError struct {
	msg string
	err error
}

func (e *procError) Error() string { return e.msg }
func (e *procError) Unwrap() error { return e.err }

func indent(s string) string {
	return "\t" + strings.ReplaceAll(s, "\n", "\n\t")
}

// Run sends the batch to the adapter and returns its outputs for the
// selected rows (all rows when rows is nil). A process that exits, hangs
// past Options.Timeout, or answers a frame that breaks the protocol is
// killed and Run returns an error wrapping target.ErrTargetCrashed that names
// the frame and field; the next Run restarts it. An adapter's "failure"
// error frame (an exception in the op) also wraps target.ErrTargetCrashed but
// keeps the process. A canceled ctx kills the process and returns ctx's
// error.
func (t *Target) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("target %s: %w", t.info.Name, err)
	}
	if b.Op != t.op {
		return nil, fmt.Errorf("target %s runs %s, got a %s batch", t.info.Name, t.op, b.Op)
	}
	n := b.Rows()
	for _, r := range rows {
		if r < 0 || r >= n {
			return nil, fmt.Errorf("target %s: row %d out of range [0,%d)", t.info.Name, r, n)
		}
	}
	var out *target.Output
	err := t.roundTrip(ctx, replyLimit(b, rows), func(seq int) (*frame, error) {
		req, scratch, err := requestFrame(b, rows, seq, t.scratch[:0])
		t.scratch = scratch
		return req, err
	}, func(rep *frame, seq int, name string) (err error) {
		out, err = decodeReply(rep, b, rows, seq, name)
		return err
	})
	return out, err
}

// roundTrip sends the frame build makes (given its seq) to the adapter,
// restarting it first when the last exchange killed it, and hands the reply
// to decode. An error frame of the adapter becomes adapterError (the
// process lives on); a failed exchange or decode kills the process and
// returns an error wrapping target.ErrTargetCrashed, or ctx's error when ctx
// ended.
func (t *Target) roundTrip(ctx context.Context, limit uint64, build func(seq int) (*frame, error), decode func(rep *frame, seq int, name string) error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if t.proc == nil {
		if err := t.start(ctx); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("target %s: restarting the adapter: %w", t.info.Name, err)
			}
			return fmt.Errorf("target %s: restarting the adapter: %w: %w", t.info.Name, target.ErrTargetCrashed, err)
		}
	}
	t.seq++
	req, err := build(t.seq)
	if err != nil {
		return fmt.Errorf("target %s: %w", t.info.Name, err)
	}
	name := fmt.Sprintf("reply frame %d", t.seq)
	p := t.proc
	t0 := time.Now()
	rep, buf, err := p.exchange(ctx, req, t.replyBuf, name, t.opts.timeout(t.slowest), limit)
	t.replyBuf = buf
	took := time.Since(t0)
	if err == nil {
		t.slowest = max(t.slowest, took)
		t.slowReq = max(t.slowReq, took)
	}
	if err == nil {
		if rep.meta["frame"] == "error" && rep.meta["seq"] == strconv.Itoa(t.seq) {
			return t.adapterError(rep, name)
		}
		err = decode(rep, t.seq, name)
	}
	if err != nil {
		t.proc = nil
		if ctx.Err() != nil {
			if took >= max(StallFloor, TimeoutFactor/2*t.slowReq) {
				t.stall = fmt.Sprintf("%s unanswered after %s when the run ended (the slowest answer before took %s)",
					name, took.Round(time.Millisecond), t.slowest.Round(time.Millisecond))
			}
			p.discard("canceled")
			return fmt.Errorf("target %s: %w", t.info.Name, ctx.Err())
		}
		return fmt.Errorf("target %s: %w: %w", t.info.Name, target.ErrTargetCrashed, t.failed(p, err))
	}
	return nil
}

// adapterError turns an error frame into Run's error; the process lives on.
func (t *Target) adapterError(rep *frame, name string) error {
	name = strings.Replace(name, "reply", "error", 1)
	msg := rep.meta["message"]
	if rep.meta["kind"] == "unsupported" {
		return fmt.Errorf("target %s: %s: %w: %s", t.info.Name, name, ErrUnsupported, msg)
	}
	return fmt.Errorf("target %s: %s: %w: the adapter failed: %s", t.info.Name, name, target.ErrTargetCrashed, msg)
}
