package relate

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// refTarget is an rmsnorm target "on a device" (fakeDevice outputs) that
// generates lazy batches and offers a device reference: computed with the
// schedule asked for, or, when wrong is set, with wrong instead.
type refTarget struct {
	name     string
	declared oracle.Schedule
	policy   func(*target.Batch) oracle.Schedule
	wrong    oracle.Schedule // the broken reference's schedule, nil: exact
	fetched  *int
}

func (d refTarget) Info() target.Info {
	return target.Info{Name: d.name, Op: spec.OpRMSNorm, Schedule: d.declared.String()}
}

func (d refTarget) Generates(*target.Source) bool { return true }

func (d refTarget) Run(_ context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if err := b.Materialize(); err != nil {
		return nil, err
	}
	o, err := target.RunOracle(b, d.policy(b), rows)
	if err != nil {
		return nil, err
	}
	o.Device, o.DeviceTaps = &countingDevice{fakeDevice{vals: o.Values, cols: o.Cols}, d.fetched},
		&countingDevice{fakeDevice{vals: o.Taps, cols: o.TapCols, taps: true}, d.fetched}
	o.Values, o.Taps = nil, nil
	return o, nil
}

func (d refTarget) Reference(s oracle.Schedule) (target.Target, bool) {
	if d.wrong != nil {
		s = d.wrong
	}
	return refTarget{name: d.name + "-reference", declared: s, policy: func(*target.Batch) oracle.Schedule { return s }, fetched: d.fetched}, true
}

// countingDevice is a fakeDevice that counts the rows fetched to the host.
type countingDevice struct {
	fakeDevice
	fetched *int
}

func (c *countingDevice) Fetch(pos []int) ([]float32, error) {
	*c.fetched += len(pos)
	return c.fakeDevice.Fetch(pos)
}

func (c *countingDevice) CompareRows(other target.DeviceOutput, ra, rb []int, dt oracle.DType) ([]target.RowDiff, error) {
	if o, ok := other.(*countingDevice); ok {
		other = &o.fakeDevice
	}
	return c.fakeDevice.CompareRows(other, ra, rb, dt)
}

// TestDeviceReference checks oracle parity against a device reference:
// an exact target passes with only the sampled rows fetched to the host,
// a drifting target is found against the reference, and a reference that
// disagrees with the CPU oracle is a finding of its own kind.
func TestDeviceReference(t *testing.T) {
	exact := target.OracleRMSNormSchedule
	other := oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 64, Vec: 8, Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}, Order: exact.Order}
	const rows = 2100
	tests := []struct {
		name   string
		t      refTarget
		kind   spec.Kind // "" when parity must hold
		maxRow int       // fetched rows at most
	}{
		{"exact", refTarget{declared: exact, policy: func(*target.Batch) oracle.Schedule { return exact }}, "", 2 * 4},
		{"drift", refTarget{declared: exact, policy: target.TERMSNormMod32}, spec.KindMismatch, -1},
		{"broken reference", refTarget{declared: exact, policy: func(*target.Batch) oracle.Schedule { return exact }, wrong: other}, spec.KindReference, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fetched := 0
			tg := tt.t
			tg.name, tg.fetched = "test-dev-"+tt.name, &fetched
			rowsN := rows
			if tt.kind == spec.KindMismatch {
				rowsN = 2112 // a multiple of 32: the drift model's other schedule
			}
			c := rmsCase(spec.RelOracleParity, tg.name, rowsN, 64, spec.RelParams{Row: 7})
			checkFinds(t, c, tt.kind, "", tg)
			if tt.maxRow >= 0 && fetched > tt.maxRow {
				t.Errorf("%d rows fetched to the host, want at most %d (the CPU oracle's sample and its taps)", fetched, tt.maxRow)
			}
			if tt.maxRow >= 0 && fetched == 0 {
				t.Error("no row fetched: the CPU oracle never checked the device reference")
			}
		})
	}
}

func TestReferenceSample(t *testing.T) {
	got := referenceSample(2274, 7, 1030)
	want := []int{6, 7, 1030, 2054, 2273}
	if len(got) != len(want) {
		t.Fatalf("sample %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sample %v, want %v", got, want)
		}
	}
	if got := referenceSample(1, 0, 5); len(got) != 1 || got[0] != 0 {
		t.Errorf("a batch of 1: sample %v, want [0]", got)
	}
}
