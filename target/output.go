package target

import (
	"fmt"

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

// ToHost copies the rows and taps an output holds on a device (Device,
// DeviceTaps) to Values and Taps, where they are not on the host yet. The
// device copies stay until Release.
func (o *Output) ToHost() error {
	all := func() []int { return spec.Iota(len(o.Rows)) }
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

// Row returns the values of the i-th selected row (host outputs only).
func (o *Output) Row(i int) []float32 { return o.Values[i*o.Cols : (i+1)*o.Cols] }

// DeviceOutput is an output that lives on an accelerator.
type DeviceOutput interface {
	// CompareRows compares row ra[i] of this output with row rb[i] of other
	// (both batch-row positions within their outputs' Rows) in dtype dt
	// and returns one summary per pair that differs. A device may leave
	// RowDiff.SignedZero false: a +0 against -0 still counts as a differing
	// column, and a finding reads the first one's bits from Fetch. It may
	// leave RowDiff.NonFinite false too (the CUDA compare kernel does): a
	// NaN against another value still counts the largest ulps, an infinity
	// its ulp distance, so a declared ulp bound alone decides those.
	// Relations call CompareRows on an output and on its taps from two
	// goroutines at once (unless the output is a CompareStarter): an
	// implementation must allow that.
	CompareRows(other DeviceOutput, ra, rb []int, dt oracle.DType) ([]RowDiff, error)
	// Fetch copies the selected rows (positions within Rows) to the host.
	Fetch(pos []int) ([]float32, error)
	// Release frees the device memory (or returns it to a pool).
	Release()
}

// RowDigester is a DeviceOutput that digests its rows where they live:
// RowDigests returns, for each position of pos (within Rows), the row
// digest of fuzz/external.RowDigest over that row's stored bits in the
// output's dtype (fp32 for taps), with no row copied to the host. A scan
// names a differing value's class by these digests (its witnesses).
type RowDigester interface {
	RowDigests(pos []int) ([]uint64, error)
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
	// NonFinite is true when some differing column holds an infinity or a
	// NaN on either side: no ulp bound covers it. CompareSlices sets it;
	// the device compare, used only where no bound applies, does not.
	NonFinite bool
}
