package gen

import (
	"math"
	"math/rand"

	"github.com/bitparity/bitparity/spec"
)

// Token draw shares, in percent: the rest of the draws are dispatch
// thresholds (Tokens).
const (
	tokensLogPercent    = 40
	tokensDecilePercent = 40
)

// Tokens draws a batch size in 1..top, the distribution of the batch
// dimension of a campaign at a model profile (top is its max_tokens):
//
//	40%  log-uniform:        n = ⌊(top+1)^U⌋, U ~ Uniform[0,1)
//	40%  uniform by decile:  d ~ Uniform{0..9},
//	                         n ~ Uniform{⌊d·top/10⌋+1 .. ⌊(d+1)·top/10⌋}
//	20%  a dispatch threshold t+δ, δ ~ Uniform{-1, 0, +1}, where t is
//	     (half) k·m for m ~ Uniform{32, 64}, k ~ Uniform{1..⌊top/m⌋}, or
//	     (half) a named size <= top: a power of two, a multiple of 132
//	     (H200 SMs), 928, 2274 or 4548
//
// clamped to 1..top. Every decile of 1..top (for top >= 10) is drawn with
// probability >= 0.4·0.1 = 4% per draw from the decile part alone, so
// within n draws a decile is missed with probability <= 0.96^n (1.7% at
// n = 100, 10^-9 at n = 500); the log-uniform part keeps small batches
// (decode, one request, a short prompt) common, as on a serving engine,
// and the thresholds are where kernels switch code paths.
func Tokens(r *rand.Rand, top int) int {
	if top <= 1 {
		return 1
	}
	var n int
	switch p := r.Intn(100); {
	case p < tokensLogPercent:
		n = int(math.Pow(float64(top+1), r.Float64()))
	case p < tokensLogPercent+tokensDecilePercent:
		d := r.Intn(10)
		lo, hi := d*top/10, (d+1)*top/10
		n = lo + 1 + r.Intn(max(1, hi-lo))
	default:
		n = threshold(r, top) + r.Intn(3) - 1
	}
	return min(max(n, 1), top)
}

// threshold returns a dispatch threshold <= top (Tokens' last part).
func threshold(r *rand.Rand, top int) int {
	if r.Intn(2) == 0 {
		m := 32 << r.Intn(2)
		if top < m {
			return 1 + r.Intn(top)
		}
		return m * (1 + r.Intn(top/m))
	}
	var named []int
	for p := 1; p <= top; p *= 2 {
		named = append(named, p)
	}
	for k := smCount; k <= top; k += smCount {
		named = append(named, k)
	}
	for _, v := range namedRows {
		if v <= top {
			named = append(named, v)
		}
	}
	return pick(r, named)
}

// Spread redraws the batch dimensions of c over 1..maxTokens (Tokens) and
// keeps its inner sizes, dtypes and value draw: it makes a case drawn at a
// model profile (its inner sizes already set) reach the profile's batch
// sizes instead of the few that gen's work budget leaves at a real width.
//
//	rmsnorm, gemm, logprob, attn_decode  rows = Tokens(maxTokens)
//	attn_prefill                         t = Tokens(maxTokens) tokens as
//	                                     seqs = 1 (half) or Uniform{1..8}
//	                                     sequences of seq_len = ⌈t/seqs⌉
//	batch_invariance                     Rel.Batch = Tokens(maxTokens)
//	                                     (attn_prefill: Uniform{1..8})
//	padding                              Rel.Pad as gen draws it (the next
//	                                     multiple of 64 or 8, power of
//	                                     two, 4548, rows+1..64), within
//	                                     max(rows+1, maxTokens)
//
// An attn_decode KV length (gen's draw) is cut so that the batch fits
// spec.MaxElements, and per-request KV lengths are drawn as gen does (one
// case in five of up to 64 requests). The relation's watched row, position,
// permutation and mask are drawn again (drawRel), and its distribution by
// the new batch (Sensitive). A case that still needs
// more than spec.MaxElements values (an lm_head or a vocabulary-wide
// logprob at thousands of rows) is left so: the caller draws again.
func Spread(r *rand.Rand, c *spec.Case, maxTokens int) {
	k, g := drawer(c.Op), opGen{r}
	k.SetTokens(&c.Shape, g, Tokens(r, maxTokens))
	rows := c.BatchRows()
	c.Rel.Batch, c.Rel.Position, c.Rel.Row, c.Rel.PermSeed, c.Rel.Mask = 0, 0, 0, 0, nil
	switch c.Relation {
	case spec.RelBatchInvariance:
		c.Rel.Batch = k.OtherBatch(g, Tokens(r, maxTokens), k.MaxBatch())
	case spec.RelPadding:
		c.Rel.Pad = drawPad(r, rows, max(rows+1, maxTokens))
	}
	k.FitTokens(c, g, spec.SatAdd(rows, c.Rel.Batch, c.Rel.Pad))
	drawRel(r, c)
	Sensitive(c)
}
