package e2e

import (
	"fmt"

	"github.com/bitparity/bitparity/oracle"
)

// batch is the token rows one kernel call sees. Rows that hold no token
// (decode filler) count in rows, so a policy sees the padded size, but are
// not computed: every oracle op is row-independent, so a filler row's
// values can never reach a real row, and computing only the real rows
// (the oracle's row subsets) gives the real rows' exact bits.
type batch struct {
	phase Phase
	rows  int   // M, filler included
	real  []int // rows that hold tokens, ascending; nil when every row does
	tok   []int // per row: global token index (Taps), -1 for filler
}

// runner runs the ops of one path with one kernel set, optionally tapping
// every op's output per token.
type runner struct {
	m    *Model
	k    Kernels
	ops  Ops // where the reduction ops run: opsOf(k)
	path Path
	taps *Taps
}

func (r *runner) call(site Site, b *batch, rows int) Schedule {
	return r.k.Schedule(Call{Site: site, Path: r.path, Phase: b.phase, Rows: rows, Heads: r.m.Heads})
}

// scatter places the selected rows' values (len(real) x cols) into an
// M x cols buffer; unselected rows stay +0.
func scatter(b *batch, vals []float32, cols int) []float32 {
	if b.real == nil {
		return vals
	}
	out := make([]float32, b.rows*cols)
	for i, row := range b.real {
		copy(out[row*cols:(row+1)*cols], vals[i*cols:(i+1)*cols])
	}
	return out
}

func (r *runner) tap(site Site, b *batch, y []float32, cols int) {
	if r.taps == nil {
		return
	}
	c := Call{Site: site, Path: r.path, Phase: b.phase, Rows: b.rows, Heads: r.m.Heads}
	for row, t := range b.tok {
		if t >= 0 {
			r.taps.put(site, c, t, y[row*cols:(row+1)*cols])
		}
	}
}

// rmsnorm is y = RMSNorm(x, w) over the batch's rows with the schedule
// the kernels choose for (site, rows).
func (r *runner) rmsnorm(site Site, b *batch, x, w []float32) ([]float32, error) {
	H := r.m.Hidden
	s := r.call(site, b, b.rows)
	y, err := r.ops.RMSNorm(oracle.RMSNormInput{X: x, W: w, Rows: b.rows, Hidden: H, Eps: r.m.Eps, Out: oracle.FP32}, s.RMSNorm, b.real)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.path, site, err)
	}
	return r.round(site, b, scatter(b, y, H), H), nil
}

// gemm is y = x·W (x: M x k, W: k x n) with the schedule the kernels
// choose for (site, M), rounded to the model's dtype.
func (r *runner) gemm(site Site, b *batch, x []float32, k int, W []float32, n int) ([]float32, error) {
	s := r.call(site, b, b.rows)
	y, err := r.ops.GEMM(oracle.GEMMInput{X: x, W: W, M: b.rows, K: k, N: n, Out: oracle.FP32}, s.GEMM, b.real)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.path, site, err)
	}
	return r.round(site, b, scatter(b, y, n), n), nil
}

// round taps the fp32 results of a reduction op (what a kernel holds in
// registers before its store) and rounds them to the model's dtype in
// place. The oracle ops end with y = round_out(v) of the same fp32 v, so
// running them with Out = fp32 and rounding here gives the very bits an
// op with Out = dtype gives, and the taps see drift that the rounding to
// bf16 would hide.
func (r *runner) round(site Site, b *batch, y []float32, cols int) []float32 {
	r.tap(site, b, y, cols)
	oracle.RoundSlice(r.m.DType, y)
	return y
}

// residual is h[i] = round_dtype(add.rn(h[i], o[i])) for every element.
func (r *runner) residual(site Site, b *batch, h, o []float32) []float32 {
	y := make([]float32, len(h))
	for i := range h {
		y[i] = oracle.Add32(h[i], o[i])
	}
	return r.round(site, b, y, r.m.Hidden)
}

// silu is x / (1 + e^-x) with add.rn, the portable Exp32 and div.rn.
func silu(x float32) float32 { return oracle.Div32(x, oracle.Add32(1, oracle.Exp32(-x))) }

// act is the gated MLP activation: for row i and column j < FFN,
//
//	a[i][j] = round_dtype(mul.rn(silu(up[i][j]), up[i][FFN+j]))
func (r *runner) act(site Site, b *batch, up []float32) []float32 {
	F := r.m.FFN
	a := make([]float32, b.rows*F)
	for i := range b.rows {
		g, u := up[i*2*F:i*2*F+F], up[i*2*F+F:(i+1)*2*F]
		for j := range F {
			a[i*F+j] = oracle.Mul32(silu(g[j]), u[j])
		}
	}
	return r.round(site, b, a, F)
}

// embed looks up each token row's embedding; filler rows get fill.
func (r *runner) embed(b *batch, ids []int32, fill []float32) []float32 {
	H := r.m.Hidden
	h := make([]float32, b.rows*H)
	for i := range b.rows {
		if b.tok[i] < 0 {
			copy(h[i*H:(i+1)*H], fill)
			continue
		}
		copy(h[i*H:(i+1)*H], r.m.Embed[int(ids[i])*H:(int(ids[i])+1)*H])
	}
	r.tap(Site{0, OpEmbed}, b, h, H)
	return h
}

// attendFunc computes the attention output (M x Heads·HeadDim) of layer l
// from the QKV projection (M x qkvWidth).
type attendFunc func(l int, qkv []float32) ([]float32, error)

// layers runs every decoder layer over the batch:
//
//	a   = RMSNorm(h, attn_norm)           q|k|v = a·Wqkv
//	o   = attention(q, k, v)·Wout         h = round(h + o)
//	m   = RMSNorm(h, mlp_norm)            g|u = m·Wup
//	d   = round(silu(g)·u)·Wdown          h = round(h + d)
//
// with, in a model with experts, d the mixture of experts of m (moe).
func (r *runner) layers(b *batch, h []float32, attend attendFunc) ([]float32, error) {
	c := r.m.Config
	HD := c.Heads * c.HeadDim
	for l, L := range r.m.Blocks {
		a, err := r.rmsnorm(Site{l, OpAttnNorm}, b, h, L.AttnNorm)
		if err != nil {
			return nil, err
		}
		qkv, err := r.gemm(Site{l, OpQKV}, b, a, c.Hidden, L.QKV, c.qkvWidth())
		if err != nil {
			return nil, err
		}
		att, err := attend(l, qkv)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", r.path, Site{l, OpAttention}, err)
		}
		att = r.round(Site{l, OpAttention}, b, att, HD)
		o, err := r.gemm(Site{l, OpOutProj}, b, att, HD, L.Out, c.Hidden)
		if err != nil {
			return nil, err
		}
		h = r.residual(Site{l, OpAttnResidual}, b, h, o)
		m, err := r.rmsnorm(Site{l, OpMLPNorm}, b, h, L.MLPNorm)
		if err != nil {
			return nil, err
		}
		d, err := r.mlp(l, b, m)
		if err != nil {
			return nil, err
		}
		h = r.residual(Site{l, OpMLPResidual}, b, h, d)
	}
	return h, nil
}

// mlp is layer l's MLP over m = RMSNorm(h, mlp_norm): the gated MLP, or
// in a model with experts the mixture of experts (moe).
func (r *runner) mlp(l int, b *batch, m []float32) ([]float32, error) {
	c, L := r.m.Config, r.m.Blocks[l]
	if c.Experts > 0 {
		return r.moe(l, b, m)
	}
	up, err := r.gemm(Site{l, OpMLPUp}, b, m, c.Hidden, L.Up, 2*c.FFN)
	if err != nil {
		return nil, err
	}
	act := r.act(Site{l, OpMLPAct}, b, up)
	return r.gemm(Site{l, OpMLPDown}, b, act, c.FFN, L.Down, c.Hidden)
}

// finalNorm is the final RMSNorm (site Final, final_norm) of the hidden
// states h of batch b.
func (r *runner) finalNorm(b *batch, h []float32) ([]float32, error) {
	return r.rmsnorm(Site{Final, OpFinalNorm}, b, h, r.m.FinalNorm)
}

// head is the model's head on every row of batch b: finalNorm of h, then
// logprobs of targets.
func (r *runner) head(b *batch, h []float32, targets []int32) ([]float32, error) {
	f, err := r.finalNorm(b, h)
	if err != nil {
		return nil, err
	}
	return r.logprobs(b, f, targets)
}

// logprobs computes, for the head batch hb (rows whose next-token
// log-prob is wanted), logits = round_dtype(x·Wlm) and the fp32 token
// log-probs of targets, one per selected row (hb.real order, or all rows).
func (r *runner) logprobs(hb *batch, x []float32, targets []int32) ([]float32, error) {
	c := r.m.Config
	logits, err := r.gemm(Site{Final, OpLMHead}, hb, x, c.Hidden, r.m.LMHead, c.Vocab)
	if err != nil {
		return nil, err
	}
	site := Site{Final, OpLogProb}
	s := r.call(site, hb, hb.rows)
	lp, err := r.ops.LogProb(oracle.LogProbInput{Logits: logits, Targets: targets, Rows: hb.rows, Vocab: c.Vocab}, s.LogProb, hb.real)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.path, site, err)
	}
	if r.taps != nil {
		r.tap(site, hb, scatter(hb, lp, 1), 1)
	}
	return lp, nil
}

// prefillSeq is one sequence of a prefill batch: rows [start, start+n) of
// the batch are its positions 0..n-1.
type prefillSeq struct{ start, n int }

// prefillAttention runs causal attention over whole sequences (positions
// 0..n-1 each) packed in the batch's rows, through oracle.Prefill with the
// sequences padded to the longest; only real positions are computed.
func (r *runner) prefillAttention(site Site, b *batch, qkv []float32, seqs []prefillSeq) ([]float32, error) {
	c := r.m.Config
	H, KH, D := c.Heads, c.KVHeads, c.HeadDim
	W := c.qkvWidth()
	maxLen := 0
	for _, s := range seqs {
		maxLen = max(maxLen, s.n)
	}
	in := oracle.PrefillInput{Seqs: len(seqs), SeqLen: maxLen, Heads: H, KVHeads: KH, HeadDim: D, Out: oracle.FP32,
		Q: make([]float32, len(seqs)*maxLen*H*D), K: make([]float32, len(seqs)*maxLen*KH*D), V: make([]float32, len(seqs)*maxLen*KH*D)}
	var sel []int
	for si, s := range seqs {
		for p := range s.n {
			row := qkv[(s.start+p)*W : (s.start+p+1)*W]
			t := si*maxLen + p
			copy(in.Q[t*H*D:(t+1)*H*D], row[:H*D])
			copy(in.K[t*KH*D:(t+1)*KH*D], row[H*D:(H+KH)*D])
			copy(in.V[t*KH*D:(t+1)*KH*D], row[(H+KH)*D:])
			for h := range H {
				sel = append(sel, t*H+h)
			}
		}
	}
	s := r.call(site, b, b.rows)
	out, err := r.ops.Prefill(in, s.Attention, sel)
	if err != nil {
		return nil, err
	}
	att := make([]float32, b.rows*H*D)
	i := 0
	for _, s := range seqs {
		for p := range s.n {
			copy(att[(s.start+p)*H*D:(s.start+p+1)*H*D], out[i*D:(i+H)*D])
			i += H
		}
	}
	return att, nil
}
