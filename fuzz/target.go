package fuzz

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Output is what a target computed for the selected rows of a batch:
// len(Rows) rows of Cols values, exact in DType. A device target may leave
// Values nil and hold the rows on the device in Device; relations then
// compare through Device and fetch values only for findings.
type Output struct {
	Rows   []int // batch row indices, in order
	Cols   int
	DType  oracle.DType
	Values []float32 // len(Rows)*Cols, row-major; nil when Device holds them
	// Taps are optional fp32 intermediates, TapCols per row (for example
	// RMSNorm's sum of squares and rstd). A device target may leave Taps
	// nil and hold them on the device in DeviceTaps (TapCols fp32 columns
	// per row), so relations compare them there too.
	Taps       []float32
	TapCols    int
	DeviceTaps DeviceOutput
	// Filled lists positions (indices into Rows) that the target never
	// computed and filled with a placeholder (an engine that zero-fills the
	// log-probs of positions it did not report). Comparing them is a
	// misuse, not a mismatch.
	Filled []int
	Device DeviceOutput
}

// ErrUnsupported is wrapped by a target's Run error when the target does
// not implement the batch at all (a dtype or shape it has no kernel for).
// It is neither a finding nor a failure: the campaign skips the case and
// does not count it.
var ErrUnsupported = errors.New("batch not supported by this target")

// ErrTargetCrashed is wrapped by a target's Run error when the target
// faulted, hung or answered garbage (a process that died, a GPU fault): the
// relation then reports a finding of kind "crash" instead of failing.
var ErrTargetCrashed = errors.New("target crashed")

// ToHost copies the rows and taps an output holds on a device (Device,
// DeviceTaps) to Values and Taps, where they are not on the host yet. The
// device copies stay until Release.
func (o *Output) ToHost() error {
	all := func() []int {
		p := make([]int, len(o.Rows))
		for i := range p {
			p[i] = i
		}
		return p
	}
	if o.Values == nil && o.Device != nil {
		v, err := o.Device.Fetch(all())
		if err != nil {
			return fmt.Errorf("fetch device output: %w", err)
		}
		o.Values = v
	}
	if o.Taps == nil && o.DeviceTaps != nil && o.TapCols > 0 {
		v, err := o.DeviceTaps.Fetch(all())
		if err != nil {
			return fmt.Errorf("fetch device taps: %w", err)
		}
		o.Taps = v
	}
	return nil
}

// Release returns the device memory of the output's rows and taps (host
// outputs need nothing); the host copies ToHost made stay.
func (o *Output) Release() {
	if o.Device != nil {
		o.Device.Release()
	}
	if o.DeviceTaps != nil {
		o.DeviceTaps.Release()
	}
}

// shapeOK says whether the output has want rows of cols values (on the
// host or the device) and want rows of taps.
func (o *Output) shapeOK(want, cols int) bool {
	taps := len(o.Taps) == want*o.TapCols || o.Taps == nil && o.DeviceTaps != nil && o.TapCols > 0
	return len(o.Rows) == want && o.Cols == cols && (o.Values == nil || len(o.Values) == want*o.Cols) && taps
}

// Row returns the values of the i-th selected row (host outputs only).
func (o *Output) Row(i int) []float32 { return o.Values[i*o.Cols : (i+1)*o.Cols] }

// DeviceOutput is an output that lives on an accelerator.
type DeviceOutput interface {
	// CompareRows compares row ra[i] of this output with row rb[i] of other
	// (both batch-row positions within their outputs' Rows) in dtype dt
	// and returns one summary per pair that differs. A device may leave
	// RowDiff.SignedZero false: a +0 against -0 still counts as a differing
	// column, and a finding reads the first one's bits from Fetch.
	// Relations call CompareRows on an output and on its taps from two
	// goroutines at once (unless the output is a CompareStarter): an
	// implementation must allow that.
	CompareRows(other DeviceOutput, ra, rb []int, dt oracle.DType) ([]RowDiff, error)
	// Fetch copies the selected rows (positions within Rows) to the host.
	Fetch(pos []int) ([]float32, error)
	// Release frees the device memory (or returns it to a pool).
	Release()
}

// CompareStarter is a DeviceOutput that can queue a compare and return
// before it has run. Relations queue the taps compare this way ahead of
// the outputs compare, so one check waits for the device on one thread:
// when the outputs compare is done, the taps compare queued before it
// usually is too.
type CompareStarter interface {
	// StartCompare queues what CompareRows computes and returns the wait
	// for its result, which the caller must call exactly once (it frees
	// what the compare holds).
	StartCompare(other DeviceOutput, ra, rb []int, dt oracle.DType) (wait func() ([]RowDiff, error), err error)
}

// RowDiff summarises one differing row pair.
type RowDiff struct {
	PosA, PosB int    // positions in the two outputs' Rows
	Count      int    // differing columns
	FirstCol   int    // first differing column
	MaxULPs    uint64 // largest ulp distance in the compared dtype
	// SignedZero is true when some differing column is +0 against -0
	// (0 ulps apart, different bits).
	SignedZero bool
}

// Info describes a target for `bitparity list` and for reports.
type Info struct {
	Name string
	Op   spec.Op
	// Device is "cpu", "cuda:N", "process", ...
	Device string
	// Invariant is true when the target claims every relation holds
	// (batch invariance, padding, determinism). Drift models are false:
	// they are negative controls and must be found.
	Invariant bool
	// Schedule, when the target declares one, is the oracle schedule it
	// implements bit for bit; oracle parity is then bitwise. Empty means
	// oracle parity is an ulp bound (ULPBound).
	Schedule string
	ULPBound uint64
	// Models says which real kernel behaviour a drift model reproduces and
	// where that fact comes from.
	Models string
	// Expect lists the relations a drift model (a negative control) must
	// be found by; empty for invariant targets.
	Expect []string
}

// Target is an implementation of one op that can run a batch.
type Target interface {
	Info() Info
	// Run computes the selected rows of b (all rows when rows is nil).
	Run(ctx context.Context, b *Batch, rows []int) (*Output, error)
}

// Factory makes a target; it may fail when the target is not available in
// this build or on this machine.
type Factory func() (Target, error)

var (
	regMu    sync.Mutex
	registry = map[string]Factory{}
	made     = map[string]Target{}
)

// Register adds a target factory under name. It panics on a duplicate name
// (programmer misuse).
func Register(name string, f Factory) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("fuzz: target registered twice: " + name)
	}
	registry[name] = f
}

// Names lists the registered target names, sorted.
func Names() []string {
	regMu.Lock()
	defer regMu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the target registered under name, made by its factory on
// the first successful call and the same one after (a factory that fails,
// for want of a GPU say, is asked again next time).
func Lookup(name string) (Target, error) {
	regMu.Lock()
	if t, ok := made[name]; ok {
		regMu.Unlock()
		return t, nil
	}
	f, ok := registry[name]
	regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown target %q (bitparity list shows the targets of this build)", name)
	}
	t, err := f()
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	regMu.Lock()
	if prev, ok := made[name]; ok {
		t = prev
	} else {
		made[name] = t
	}
	regMu.Unlock()
	return t, nil
}
