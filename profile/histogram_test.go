package profile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestHistogram: each case counts in the decile of its largest batch, cut
// to Top; a prefill's Rel.Batch (sequences) does not count.
func TestHistogram(t *testing.T) {
	h := &Histogram{Top: 100}
	var b bytes.Buffer
	h.Write(&b, "p")
	if b.Len() != 0 {
		t.Errorf("empty histogram wrote %q", b.String())
	}
	for _, c := range []spec.Case{
		{Op: spec.OpRMSNorm, Shape: spec.Shape{Rows: 5}},                                                 // 1..10
		{Op: spec.OpRMSNorm, Shape: spec.Shape{Rows: 5}, Rel: spec.RelParams{Batch: 95}},                 // 91..100
		{Op: spec.OpRMSNorm, Shape: spec.Shape{Rows: 500}},                                               // cut to 100
		{Op: spec.OpAttnPrefill, Shape: spec.Shape{Seqs: 2, SeqLen: 10}, Rel: spec.RelParams{Batch: 99}}, // 20: 11..20
	} {
		h.Add(c)
	}
	h.Write(&b, "p")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 11 || !strings.Contains(lines[0], "profile p") {
		t.Fatalf("Write:\n%s", b.String())
	}
	for i, want := range map[int]string{1: "1..10 1 25.0%", 2: "11..20 1 25.0%", 5: "41..50 0 0.0%", 10: "91..100 2 50.0%"} {
		if got := strings.Join(strings.Fields(lines[i]), " "); got != want {
			t.Errorf("line %d = %q, want %q", i, got, want)
		}
	}
}

// TestScanDTypes: the profile's dtypes and eps where no flag gave them;
// log-prob keeps fp32 out, and only rmsnorm takes an eps.
func TestScanDTypes(t *testing.T) {
	p := &Profile{DType: spec.FP16, Eps: 1e-5}
	none := func(string) bool { return false }
	s := spec.ScanSpec{Op: spec.OpRMSNorm, In: spec.BF16, Out: spec.BF16}
	p.ScanDTypes(&s, none)
	if s.In != spec.FP16 || s.Out != spec.FP16 || s.Eps != 1e-5 {
		t.Errorf("rmsnorm: %+v", s)
	}
	s = spec.ScanSpec{Op: spec.OpLogProb, In: spec.BF16, Out: spec.FP32}
	p.ScanDTypes(&s, func(f string) bool { return f == "in" })
	if s.In != spec.BF16 || s.Out != spec.FP32 || s.Eps != 0 {
		t.Errorf("logprob with --in: %+v", s)
	}
}
