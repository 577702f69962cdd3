package boundary_test

import (
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/internal/golden"
	"github.com/bitparity/bitparity/spec"
)

var update = flag.Bool("update", false, "rewrite testdata/inputs.golden")

// goldenCases are boundary cases of generator version 1 whose input bits
// must never change (old case files replay bit for bit): every op,
// bf16/fp16/fp32 inputs, a 4096-wide RMSNorm (the oracle schedule's 32
// threads all busy) and a GEMM with a long K.
func goldenCases() []spec.Case {
	var cs []spec.Case
	for _, tc := range nudgeCases {
		cs = append(cs, tc.c)
	}
	cs = append(cs,
		spec.Case{Op: spec.OpRMSNorm, Shape: spec.Shape{Rows: 6, Hidden: 4096}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6},
		spec.Case{Op: spec.OpRMSNorm, Shape: spec.Shape{Rows: 5, Hidden: 1000}, In: spec.FP16, Out: spec.FP16, Eps: 1e-5},
		spec.Case{Op: spec.OpGEMM, Shape: spec.Shape{Rows: 9, Hidden: 2048, N: 16}, In: spec.FP32, Out: spec.BF16},
		spec.Case{Op: spec.OpAttnDecode, Shape: spec.Shape{Rows: 3, KV: 300, Heads: 8, KVHeads: 8, HeadDim: 64}, In: spec.FP16, Out: spec.FP16},
	)
	var out []spec.Case
	for _, c := range cs {
		for _, seed := range []uint64{1, 2} {
			c.Version, c.GenVersion, c.Seed, c.Dist = spec.CaseVersion, 1, seed, spec.DistBoundary
			out = append(out, c)
		}
	}
	return out
}

// inputsHash is the sha256 of a batch's per-row tensors' bits, by tensor
// name in order.
func inputsHash(t *testing.T, c spec.Case) string {
	t.Helper()
	b, err := inputs.Of(c)
	if err != nil {
		t.Fatal(err)
	}
	m := tensors(b)
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		binary.Write(h, binary.LittleEndian, m[n])
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:32]
}

// TestNudgeGolden: the inputs of goldenCases hash as testdata/inputs.golden
// says (go test ./boundary -run TestNudgeGolden -update rewrites it,
// which a change of boundary nudging must never need for generator
// version 1).
func TestNudgeGolden(t *testing.T) {
	var lines []string
	for i, c := range goldenCases() {
		lines = append(lines, fmt.Sprintf("%s case %d: %s %s -> %s, seed %d", inputsHash(t, c), i, c.Op, c.In, c.Out, c.Seed))
	}
	got := strings.Join(lines, "\n") + "\n"
	golden.Check(t, filepath.Join("testdata", "inputs.golden"), []byte(got), *update)
}
