package scan

import (
	"testing"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// fetchOnly is a device output that only copies rows to the host.
type fetchOnly struct {
	o       *target.Output
	fetched int
}

func (f *fetchOnly) CompareRows(target.DeviceOutput, []int, []int, oracle.DType) ([]target.RowDiff, error) {
	return nil, nil
}
func (f *fetchOnly) Release() {}
func (f *fetchOnly) Fetch(pos []int) ([]float32, error) {
	f.fetched += len(pos)
	var v []float32
	for _, p := range pos {
		v = append(v, f.o.Values[p*f.o.Cols:(p+1)*f.o.Cols]...)
	}
	return v, nil
}

// digesting is a device output that digests rows where they live (as a
// GPU's does, target.RowDigester) and must never be fetched.
type digesting struct{ fetchOnly }

func (d *digesting) Fetch([]int) ([]float32, error) {
	d.fetched++
	return nil, nil
}
func (d *digesting) RowDigests(pos []int) ([]uint64, error) {
	ds := make([]uint64, len(pos))
	words := make([]uint32, d.o.Cols)
	for i, p := range pos {
		for j, v := range d.o.Values[p*d.o.Cols : (p+1)*d.o.Cols] {
			words[j] = oracle.ToBits(d.o.DType, v)
		}
		ds[i] = external.RowDigest(words)
	}
	return ds, nil
}

// TestWitnessesSameEverywhere: a witness is named by the same digest
// whether its rows are on the host, fetched from a device, or digested on
// the device with no row fetched; rows that differ in one bit, or the
// same rows in another order, get another digest.
func TestWitnessesSameEverywhere(t *testing.T) {
	const rows, cols = 6, 5
	host := &target.Output{Rows: spec.Iota(rows), Cols: cols, DType: oracle.BF16, Values: make([]float32, rows*cols)}
	for i := range host.Values {
		host.Values[i] = oracle.Round(oracle.BF16, float32(i)/3-4)
	}
	pos := []int{4, 1, 0, 5} // two witnesses of two rows each
	want, err := witnesses(host, pos, 2)
	if err != nil {
		t.Fatal(err)
	}
	fetch := &fetchOnly{o: host}
	dig := &digesting{fetchOnly{o: host}}
	for name, dev := range map[string]target.DeviceOutput{"fetched": fetch, "digested on the device": dig} {
		got, err := witnesses(&target.Output{Rows: host.Rows, Cols: cols, DType: oracle.BF16, Device: dev}, pos, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s: witnesses %v, on the host %v", name, got, want)
		}
	}
	if fetch.fetched != len(pos) || dig.fetched != 0 {
		t.Errorf("rows fetched: %d by the fetching output (want %d), %d by the digesting one (want 0)", fetch.fetched, len(pos), dig.fetched)
	}
	if want[0] == want[1] {
		t.Errorf("two witnesses of other rows share digest %s", want[0])
	}
	swapped, _ := witnesses(host, []int{1, 4}, 2)
	if swapped[0] == want[0] {
		t.Errorf("rows 1, 4 and rows 4, 1 share digest %s", want[0])
	}
	host.Values[4*cols+2] = oracle.FromBits(oracle.BF16, oracle.ToBits(oracle.BF16, host.Values[4*cols+2])^1)
	flipped, _ := witnesses(host, pos, 2)
	if flipped[0] == want[0] || flipped[1] != want[1] {
		t.Errorf("one bit of row 4 flipped: witnesses %v, before %v", flipped, want)
	}
}
