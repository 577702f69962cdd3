package inputs

import (
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// Shapes whose products overflow int must be refused as too large, never
// wrap into a small size (found by FuzzDecodeBatchInvariance: heads
// 13333614400 x head dim 1073741822).
func TestInputsRefuseOverflowingShapes(t *testing.T) {
	huge := 1 << 40
	cases := []spec.Case{
		{Op: spec.OpAttnDecode, Shape: spec.Shape{Rows: 31, KV: 32, Heads: 13333614400, KVHeads: 208337725, HeadDim: 1073741822}},
		{Op: spec.OpAttnPrefill, Shape: spec.Shape{Seqs: huge, SeqLen: huge, Heads: 1, KVHeads: 1, HeadDim: 1}},
		{Op: spec.OpGEMM, Shape: spec.Shape{Rows: 1, Hidden: huge, N: huge}},
		{Op: spec.OpRMSNorm, Shape: spec.Shape{Rows: huge, Hidden: huge}},
		{Op: spec.OpLogProb, Shape: spec.Shape{Rows: 1 << 62, Vocab: 4}},
	}
	for _, c := range cases {
		c.Version, c.In, c.Out, c.Dist, c.GenVersion = spec.CaseVersion, spec.BF16, spec.BF16, spec.DistNormal, spec.GeneratorVersion
		_, err := Of(c)
		if err == nil || !strings.Contains(err.Error(), "too large") {
			t.Errorf("%s %+v: got %v, want a 'case too large' error", c.Op, c.Shape, err)
		}
	}
}
