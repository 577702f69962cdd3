package scan

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bitparity/bitparity/spec"
)

// TestPathSpecRoundTrip: a path scan stated as a ScanSpec reads back as
// the same path scan, and a one-target spec is no path scan.
func TestPathSpecRoundTrip(t *testing.T) {
	ps := PathSpec{Prefill: "oracle-attn-prefill", Decode: "drift-decode-splits-by-batch", From: 1, To: 60, Seqs: 2,
		Heads: 4, KVHeads: 2, HeadDim: 16, In: spec.BF16, Out: spec.BF16, Dists: DefaultDists, Seed: 3, GenVersion: 2, NoTaps: true}
	got, ok := PathSpecOf(ps.ScanSpec())
	if !ok {
		t.Fatal("not a path scan")
	}
	if d := cmp.Diff(ps, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if _, ok := PathSpecOf(spec.ScanSpec{Target: "oracle-rmsnorm"}); ok {
		t.Error("one target read as a path scan")
	}
}

// TestRerun: Rerun runs a target's scan and states its verdict; a user
// kernel's is refused (it needs a worker).
func TestRerun(t *testing.T) {
	s := spec.ScanSpec{Target: "drift-rmsnorm-te-mod32", Op: spec.OpRMSNorm, To: 40, Shape: spec.Shape{Hidden: 64}}
	got, err := Rerun(context.Background(), s, Options{})
	if err != nil || got.Verdict != spec.ScanDrift || got.Map.Rule != "rows <= 31 -> A, rows == 32 -> B, rows >= 33 -> A" || len(got.Diffs) == 0 {
		t.Fatalf("drift: %v %+v", err, got)
	}
	s.Target = "oracle-rmsnorm"
	if got, err := Rerun(context.Background(), s, Options{}); err != nil || got.Verdict != spec.ScanCertified || got.Certificate == nil {
		t.Fatalf("oracle: %v %+v", err, got)
	}
	s.Target = "kernel:mine"
	if _, err := Rerun(context.Background(), s, Options{}); err == nil {
		t.Error("a user kernel's scan ran without a worker")
	}
}
