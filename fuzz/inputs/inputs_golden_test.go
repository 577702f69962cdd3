package inputs

import (
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"testing"

	"github.com/bitparity/bitparity/internal/golden"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

var update = flag.Bool("update", false, "rewrite testdata/inputs_golden.json (the input hashes of both generator versions)")

// goldenInputCases are small cases of every op, several distributions
// (boundary among them) and dtypes, with attention's row keys.
func goldenInputCases() map[string]spec.Case {
	base := func(op spec.Op, sh spec.Shape, in spec.DType, d spec.Dist, seed uint64) spec.Case {
		return spec.Case{Version: spec.CaseVersion, Op: op, Relation: spec.RelOracleParity, Shape: sh,
			In: in, Out: in, Eps: 1e-6, Dist: d, Seed: seed}
	}
	cs := map[string]spec.Case{
		"rmsnorm-normal-bf16":      base(spec.OpRMSNorm, spec.Shape{Rows: 5, Hidden: 64}, spec.BF16, spec.DistNormal, 1),
		"rmsnorm-boundary-bf16":    base(spec.OpRMSNorm, spec.Shape{Rows: 4, Hidden: 96}, spec.BF16, spec.DistBoundary, 2),
		"rmsnorm-heavy-fp16":       base(spec.OpRMSNorm, spec.Shape{Rows: 3, Hidden: 40}, spec.FP16, spec.DistHeavy, 3),
		"gemm-ties-fp32":           base(spec.OpGEMM, spec.Shape{Rows: 3, Hidden: 16, N: 5}, spec.FP32, spec.DistTies, 4),
		"gemm-outlier-bf16":        base(spec.OpGEMM, spec.Shape{Rows: 2, Hidden: 33, N: 3}, spec.BF16, spec.DistOutlier, 5),
		"logprob-nearoverflow-f16": base(spec.OpLogProb, spec.Shape{Rows: 3, Vocab: 50}, spec.FP16, spec.DistNearOverflow, 6),
		"logprob-boundary-bf16":    base(spec.OpLogProb, spec.Shape{Rows: 2, Vocab: 64}, spec.BF16, spec.DistBoundary, 7),
		"prefill-signedzero-bf16": base(spec.OpAttnPrefill, spec.Shape{Seqs: 2, SeqLen: 3, Heads: 2, KVHeads: 1, HeadDim: 8},
			spec.BF16, spec.DistSignedZero, 8),
		"decode-subnormal-fp32": base(spec.OpAttnDecode, spec.Shape{Rows: 2, KVLens: []int{3, 5}, Heads: 2, KVHeads: 1, HeadDim: 8},
			spec.FP32, spec.DistSubnormal, 9),
		"decode-constant-bf16": base(spec.OpAttnDecode, spec.Shape{Rows: 2, KV: 4, Heads: 4, KVHeads: 2, HeadDim: 4},
			spec.BF16, spec.DistConstant, 10),
	}
	out := map[string]spec.Case{}
	for name, c := range cs {
		for _, v := range []int{1, 2} {
			c.GenVersion = v
			out[fmt.Sprintf("v%d/%s", v, name)] = c
		}
	}
	return out
}

// inputHash is the sha256 of every input tensor of b as dtype bits, in a
// fixed order (and the log-prob targets as int32).
func inputHash(b *target.Batch) string {
	h := sha256.New()
	put := func(xs []float32) {
		for _, x := range xs {
			binary.Write(h, binary.LittleEndian, oracle.ToBits(b.In, x))
		}
	}
	switch in := b.Input.(type) {
	case *oracle.RMSNormInput:
		put(in.X)
		put(in.W)
	case *oracle.GEMMInput:
		put(in.X)
		put(in.W)
	case *oracle.LogProbInput:
		put(in.Logits)
		binary.Write(h, binary.LittleEndian, in.Targets)
	case *oracle.PrefillInput:
		put(in.Q)
		put(in.K)
		put(in.V)
	case *oracle.DecodeInput:
		put(in.Q)
		for r := range in.K {
			put(in.K[r])
			put(in.V[r])
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestInputsGolden pins the inputs of both generator versions: version 1's
// hashes were recorded before version 2 existed and must never move (old
// case files replay bit for bit); version 2's are pinned from its first
// release. A case without gen_version (0) is version 1.
func TestInputsGolden(t *testing.T) {
	got := map[string]string{}
	for name, c := range goldenInputCases() {
		b, err := Of(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = inputHash(b)
		if c.GenVersion == 1 {
			c.GenVersion = 0
			b0, err := Of(c)
			if err != nil {
				t.Fatalf("%s as version 0: %v", name, err)
			}
			if h := inputHash(b0); h != got[name] {
				t.Errorf("%s: gen_version 0 gives %s, version 1 %s", name, h, got[name])
			}
		}
	}
	if !golden.JSON(t, "testdata/inputs_golden.json", got, *update) {
		t.Log("the generator changed")
	}
}

// TestInputsVersions checks the versions Inputs accepts: 0 to
// spec.GeneratorVersion, and explicit data whatever the version says.
func TestInputsVersions(t *testing.T) {
	c := goldenInputCases()["v2/rmsnorm-normal-bf16"]
	for _, v := range []int{-1, spec.GeneratorVersion + 1} {
		c.GenVersion = v
		if _, err := Of(c); err == nil {
			t.Errorf("gen_version %d accepted", v)
		}
	}
	c.GenVersion = 1
	b1, _ := Of(c)
	c.GenVersion = 2
	b2, _ := Of(c)
	if inputHash(b1) == inputHash(b2) {
		t.Error("versions 1 and 2 give the same inputs")
	}
}
