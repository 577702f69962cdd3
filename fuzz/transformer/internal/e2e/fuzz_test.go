package e2e

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// caseFromBytes maps fuzzer bytes to an invariant path-parity case, one
// byte per dimension (missing bytes are 0), so the fuzzer's byte
// minimisation shrinks the shape: layers, hidden, heads, kv heads, head
// dim, ffn, vocab, requests, longest request, tile, pad, filler, then an
// 8-byte seed.
func caseFromBytes(b []byte) spec.Case {
	at := func(i int) int {
		if i < len(b) {
			return int(b[i])
		}
		return 0
	}
	var seed uint64
	if len(b) > 12 {
		var s [8]byte
		copy(s[:], b[12:])
		seed = binary.LittleEndian.Uint64(s[:])
	}
	kv := 1 + at(3)%2
	c := spec.Case{
		Version: spec.CaseVersion, Op: spec.OpTransformer, Relation: spec.RelPathParity,
		Targets: []string{TrainPrefix + "fixed", InferPrefix + "fixed"},
		Shape: spec.Shape{
			Rows: 1 + at(0)%3, Hidden: 1 + at(1)%64, Heads: kv * (1 + at(2)%4), KVHeads: kv,
			HeadDim: 1 + at(4)%16, N: 1 + at(5)%96, Vocab: 2 + at(6)%160, Seqs: 1 + at(7)%6,
			SeqLen: 2 + at(8)%48, KV: 1 + at(9)%64,
		},
		In: spec.BF16, Out: spec.BF16, Eps: 1e-5, Seed: seed,
		Rel: spec.RelParams{Pad: at(10) % 130, Filler: []string{"zeros", "normal", "nan", "huge"}[at(11)%4]},
	}
	reqs := Plan(seed, c.Shape.Seqs, c.Shape.SeqLen, c.Shape.Vocab)
	if mask := ReportedMask(reqs); len(mask) > 0 {
		c.Rel.Mask = mask
	}
	return c
}

// FuzzInvariantPaths: go test -fuzz FuzzInvariantPaths ./fuzz/transformer
// fuzzes models and request mixes under fixed kernels; any finding is a
// bug in the paths or the oracle.
func FuzzInvariantPaths(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 31, 3, 1, 7, 47, 96, 5, 29, 15, 64, 2, 42})
	f.Add([]byte{1, 63, 1, 0, 15, 95, 159, 3, 47, 47, 0, 3, 7, 7, 7, 7, 7, 7, 7, 7})
	f.Fuzz(func(t *testing.T, b []byte) {
		c := caseFromBytes(b)
		fd, err := Check(context.Background(), c)
		if err != nil {
			t.Fatalf("case %+v: %v", c, err)
		}
		if fd != nil {
			t.Fatalf("fixed kernels gave a %s finding: %s\nrepro: %s", fd.Kind, fd.Message, fd.Repro)
		}
	})
}
