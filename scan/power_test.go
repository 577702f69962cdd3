package scan

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestDecodePower: an attn_decode scan over requests takes the sensitive
// draw and the power loop by default, and its certificate states the
// power over its requests; a scan over KV lengths measures none.
func TestDecodePower(t *testing.T) {
	shape := spec.Shape{KV: 96, Heads: 2, KVHeads: 1, HeadDim: 16}
	s := spec.ScanSpec{Target: "oracle-attn_decode", To: 6, Shape: shape, Seed: 2, NoTaps: true, Power: -1}
	r, err := Run(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Certificate
	if c == nil || c.Power == nil {
		t.Fatalf("certificate %+v, want one with its power", c)
	}
	p := c.Power
	if p.Target != DefaultPower || p.Positions != 6 || p.Family == 0 || p.Cols != 96 || p.Draws != len(c.Draws) || c.Draws[1] != spec.DistSensitive {
		t.Errorf("power %+v, draws %v: want target %g over 6 requests of a family at KV 96, the second draw sensitive", p, c.Draws, DefaultPower)
	}
	if p.Met != (c.Status.State == spec.CertValid) || !p.Met && c.Status.State != spec.CertUnderpowered {
		t.Errorf("power met %v, status %s", p.Met, c.Status.State)
	}
	t.Logf("%s: %s", c.Status.State, PowerWords(p))

	kv := spec.ScanSpec{Target: "oracle-attn_decode", Op: spec.OpAttnDecode, Dim: spec.ScanKV, From: 1, To: 20, Shape: spec.Shape{Rows: 2, Heads: 2, KVHeads: 1, HeadDim: 8}, Power: -1}
	n, err := Normalize(kv)
	if err != nil {
		t.Fatal(err)
	}
	if n.Power != 0 || len(n.Dists) != len(DefaultDists) || n.Dists[1] != DefaultDists[1] {
		t.Errorf("kv scan: power %g, dists %v; want 0 and %v", n.Power, n.Dists, DefaultDists)
	}
	kv.Power = 0.9
	if _, err := Normalize(kv); err == nil {
		t.Error("kv scan with --power 0.9: no error")
	}
}
