package e2e

import (
	"fmt"

	"github.com/bitparity/bitparity/oracle"
)

// RunTrain is the train path: every request's whole sequence packed into
// one batch (phase Packed), so each GEMM, RMSNorm and the log-prob see all
// tokens of all sequences as rows; attention is the causal prefill of each
// sequence. It returns the log-prob of every response position (see
// positionBase), rounded to the declared training dtype lpType. taps, when
// not nil, receives every op's output per token.
func RunTrain(m *Model, k Kernels, reqs []Request, lpType oracle.DType, taps *Taps) ([]float32, error) {
	tb, tokens := tokenBase(reqs)
	pb, positions := positionBase(reqs)
	b := &batch{phase: Packed, rows: tokens, tok: make([]int, tokens)}
	ids := make([]int32, tokens)
	targets := make([]int32, tokens)
	seqs := make([]prefillSeq, len(reqs))
	for r, q := range reqs {
		if err := q.validate(m.Vocab); err != nil {
			return nil, fmt.Errorf("train: request %d: %w", r, err)
		}
		seqs[r] = prefillSeq{start: tb[r], n: len(q.Tokens)}
		for i, t := range q.Tokens {
			b.tok[tb[r]+i] = tb[r] + i
			ids[tb[r]+i] = t
			if i+1 < len(q.Tokens) {
				targets[tb[r]+i] = q.Tokens[i+1] // the last token predicts nothing: target 0
			}
		}
	}
	run := &runner{m: m, k: k, ops: opsOf(k), path: Train, taps: taps}
	h := run.embed(b, ids, nil)
	h, err := run.layers(b, h, func(l int, qkv []float32) ([]float32, error) {
		return run.prefillAttention(Site{l, OpAttention}, b, qkv, seqs)
	})
	if err != nil {
		return nil, err
	}
	lp, err := run.head(b, h, targets)
	if err != nil {
		return nil, err
	}
	out := make([]float32, positions)
	for r, q := range reqs {
		for j := range q.Response() {
			out[pb[r]+j] = oracle.Round(lpType, lp[tb[r]+q.Prompt+j-1])
		}
	}
	return out, nil
}
