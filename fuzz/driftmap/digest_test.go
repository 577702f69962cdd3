package driftmap

import (
	"math"
	"testing"
)

// TestDigest: a label is 12 hex digits; the same bits give the same label
// however they are written, and one flipped bit another.
func TestDigest(t *testing.T) {
	vs := []float32{1, -0.5, float32(math.Inf(1))}
	a := NewDigest()
	a.Float32s(vs)
	b := NewDigest()
	b.Uint32s([]uint32{math.Float32bits(1), math.Float32bits(-0.5), math.Float32bits(float32(math.Inf(1)))})
	if la, lb := a.Label(), b.Label(); la != lb || len(la) != 12 {
		t.Errorf("labels %q and %q; want one 12-digit label", la, lb)
	}
	c := NewDigest()
	c.Float32s([]float32{1, -0.5, math.Float32frombits(math.Float32bits(float32(math.Inf(1))) ^ 1)})
	if c.Label() == a.Label() {
		t.Errorf("a flipped bit keeps label %s", a.Label())
	}
	if Label("a\x00b") == Label("a\x00c") || Label("k") != Label("k") {
		t.Error("Label does not tell keys apart")
	}
}
