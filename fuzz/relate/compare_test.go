package relate

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// startingDevice is a fakeDevice that queues compares (CompareStarter)
// and counts starts and waits.
type startingDevice struct {
	fakeDevice
	started, waited int
	err             error
}

func (d *startingDevice) StartCompare(other target.DeviceOutput, ra, rb []int, dt oracle.DType) (func() ([]target.RowDiff, error), error) {
	if d.err != nil {
		return nil, d.err
	}
	o, ok := other.(*startingDevice)
	if !ok {
		return nil, errors.New("foreign device output")
	}
	d.started++
	diffs, err := d.fakeDevice.CompareRows(&o.fakeDevice, ra, rb, dt)
	return func() ([]target.RowDiff, error) { d.waited++; return diffs, err }, nil
}

// TestStartCompare: startCompare queues through CompareStarter when the
// output is one (started and waited once, no CompareRows call) and runs
// CompareRows otherwise, with the same summaries as CompareHost either
// way; a failed start comes back from the wait. startDeviceTaps starts
// only when both outputs hold their taps on the device alone.
func TestStartCompare(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{1, 2, 3, 4.5, 5, 6}
	want := fmt.Sprint(target.CompareHost(&target.Output{Values: a, Cols: 2}, &target.Output{Values: b, Cols: 2}, []int{0, 1, 2}, []int{0, 1, 2}, oracle.FP32))
	pairs := []int{0, 1, 2}

	sa, sb := &startingDevice{fakeDevice: fakeDevice{vals: a, cols: 2}}, &startingDevice{fakeDevice: fakeDevice{vals: b, cols: 2}}
	got, err := startCompare(sa, sb, pairs, pairs, oracle.FP32)()
	if err != nil || fmt.Sprint(got) != want {
		t.Fatalf("starter: %v, %v; want %s", got, err, want)
	}
	if sa.started != 1 || sa.waited != 1 || sa.compares != 1 {
		t.Errorf("starter: started %d, waited %d, compared %d times; want 1, 1, 1 (through StartCompare)", sa.started, sa.waited, sa.compares)
	}

	pa, pb := &fakeDevice{vals: a, cols: 2}, &fakeDevice{vals: b, cols: 2}
	got, err = startCompare(pa, pb, pairs, pairs, oracle.FP32)()
	if err != nil || fmt.Sprint(got) != want || pa.compares != 1 {
		t.Fatalf("plain device: %v, %v after %d compares; want %s after 1", got, err, pa.compares, want)
	}

	boom := errors.New("queue full")
	sa.err = boom
	if _, err := startCompare(sa, sb, pairs, pairs, oracle.FP32)(); !errors.Is(err, boom) {
		t.Errorf("failed start: wait returned %v, want %v", err, boom)
	}
	sa.err = nil

	dev := func(d target.DeviceOutput) *target.Output { return &target.Output{TapCols: 2, DeviceTaps: d} }
	if startDeviceTaps(dev(sa), dev(sb), pairs, pairs) == nil {
		t.Error("taps on the device on both sides: not started")
	}
	host := &target.Output{TapCols: 2, Taps: b}
	if startDeviceTaps(dev(sa), host, pairs, pairs) != nil {
		t.Error("taps on the host on one side: started on the device")
	}
	if startDeviceTaps(dev(sa), &target.Output{TapCols: 3, DeviceTaps: sb}, pairs, pairs) != nil {
		t.Error("taps of other columns: started")
	}
}
