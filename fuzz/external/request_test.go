package external

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
)

// TestRequestRoundTrip: a request frame of every case op's batch
// (ops.CaseOp.WireTensors), written and read back (FromWire), is the same
// batch, its selected rows kept.
func TestRequestRoundTrip(t *testing.T) {
	for _, k := range all.Cases {
		t.Run(string(k.Name()), func(t *testing.T) {
			next := fuzz.Stream(1, k.Name(), spec.RelBatchInvariance)
			c := next()
			for c.BatchRows() > 8 {
				c = next()
			}
			c.Targets = nil
			b, err := inputs.Of(c)
			if err != nil {
				t.Fatal(err)
			}
			rows := []int{b.Rows() - 1, 0}
			f, _, err := requestFrame(b, rows, 3, nil)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := writeFrame(&buf, f); err != nil {
				t.Fatal(err)
			}
			rf, _, err := readFrame(&buf, nil, "request frame 3", maxFrame)
			if err != nil {
				t.Fatal(err)
			}
			got, gotRows, err := decodeRequest(rf, "request frame 3")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotRows, rows) {
				t.Errorf("rows %v, want %v", gotRows, rows)
			}
			_, want, _ := b.Kind()
			_, in, err := got.Kind()
			if err != nil {
				t.Fatal(err)
			}
			if got.Op != b.Op || got.In != b.In || got.OutDType() != b.OutDType() || !reflect.DeepEqual(in, want) {
				t.Errorf("read back %s %s->%s %+v, want %s %s->%s %+v", got.Op, got.In, got.OutDType(), in, b.Op, b.In, b.OutDType(), want)
			}
		})
	}
}
