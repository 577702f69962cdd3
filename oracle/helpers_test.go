package oracle

import (
	"math"
	"math/rand/v2"
)

// newRNG returns a deterministic generator for test inputs.
func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6269747061726974)) }

// randVals returns n normal(0, scale) values rounded to dtype d.
func randVals(r *rand.Rand, d DType, n int, scale float64) []float32 {
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = Round(d, float32(r.NormFloat64()*scale))
	}
	return xs
}

// hexes formats each value of xs as hex bits of dtype d.
func hexes(d DType, xs []float32) []string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = Hex(d, x)
	}
	return s
}

// firstDiff returns the first index where a and b differ in bits, -1 if
// none, 0 if their lengths differ.
func firstDiff(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

func rmsnormInput(r *rand.Rand, in, out DType, rows, hidden int) RMSNormInput {
	w := randVals(r, in, hidden, 0.1)
	for i := range w {
		w[i] = Round(in, 1+w[i])
	}
	return RMSNormInput{X: randVals(r, in, rows*hidden, 1), W: w, Rows: rows, Hidden: hidden, Eps: 1e-6, Out: out}
}

func gemmInput(r *rand.Rand, in, out DType, m, k, n int) GEMMInput {
	return GEMMInput{X: randVals(r, in, m*k, 1), W: randVals(r, in, k*n, 1/math.Sqrt(float64(k))), M: m, K: k, N: n, Out: out}
}

func logprobInput(r *rand.Rand, in DType, rows, vocab int, scale float64) LogProbInput {
	t := make([]int32, rows)
	for i := range t {
		t[i] = int32(r.IntN(vocab))
	}
	return LogProbInput{Logits: randVals(r, in, rows*vocab, scale), Targets: t, Rows: rows, Vocab: vocab}
}

func prefillInput(r *rand.Rand, in, out DType, seqs, seqLen, heads, kvHeads, headDim int) PrefillInput {
	return PrefillInput{
		Q:    randVals(r, in, seqs*seqLen*heads*headDim, 1),
		K:    randVals(r, in, seqs*seqLen*kvHeads*headDim, 1),
		V:    randVals(r, in, seqs*seqLen*kvHeads*headDim, 1),
		Seqs: seqs, SeqLen: seqLen, Heads: heads, KVHeads: kvHeads, HeadDim: headDim, Out: out,
	}
}

// decodeInput builds a decode batch with the given KV lengths.
func decodeInput(r *rand.Rand, in, out DType, kvLens []int, heads, kvHeads, headDim int) DecodeInput {
	d := DecodeInput{Q: randVals(r, in, len(kvLens)*heads*headDim, 1), Heads: heads, KVHeads: kvHeads, HeadDim: headDim, Out: out}
	for _, L := range kvLens {
		d.K = append(d.K, randVals(r, in, L*kvHeads*headDim, 1))
		d.V = append(d.V, randVals(r, in, L*kvHeads*headDim, 1))
	}
	return d
}
