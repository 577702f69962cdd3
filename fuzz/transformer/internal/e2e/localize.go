package e2e

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

func (d *Divergence) String() string {
	s := fmt.Sprintf("first divergence: %s (%s) at request %d token %d col %d: train %s vs infer %s (fp32), %d of %d tokens differ there; train ran it in a %s batch of %d rows, infer in a %s batch of %d rows",
		d.Site, d.Site.Op.Kind(), d.Request, d.Pos, d.Col, oracle.Hex(oracle.FP32, d.A), oracle.Hex(oracle.FP32, d.B),
		d.Tokens, d.Compared, d.TrainCall.Phase, d.TrainCall.Rows, d.InferCall.Phase, d.InferCall.Rows)
	switch {
	case d.Route != nil:
		s += "; " + d.Route.String()
	case d.MoE:
		s += "; no token changed experts (the weights or later ops differ)"
	}
	return s
}

// Localize re-runs both paths of st with taps on every op and returns the
// first divergence (FirstDivergence) and the drift map of its op (DriftMap),
// or an error when the taps all agree.
func Localize(ctx context.Context, st *Setup) (*Divergence, *spec.DriftMap, error) {
	_, tokens := tokenBase(st.Requests)
	ta, tb := NewTaps(tokens), NewTaps(tokens)
	if _, _, err := st.Run(ctx, ta, tb); err != nil {
		return nil, nil, err
	}
	d := FirstDivergence(st.Model.Config, st.Requests, ta, tb)
	if d == nil {
		return nil, nil, fmt.Errorf("the two paths agree on every op output with taps on: the mismatch did not reproduce")
	}
	d.MoE = st.Model.Experts > 0
	d.Route = FirstRouteChange(st.Model.Config, st.Requests, ta, tb)
	dm, err := DriftMap(ctx, st, d, ta)
	if err != nil {
		return nil, nil, err
	}
	return d, dm, nil
}

// inputSite is the site whose (rounded) output is the input of site.
func inputSite(s Site, layers int) Site {
	switch s.Op {
	case OpAttnNorm:
		if s.Layer == 0 {
			return Site{0, OpEmbed}
		}
		return Site{s.Layer - 1, OpMLPResidual}
	case OpQKV:
		return Site{s.Layer, OpAttnNorm}
	case OpOutProj:
		return Site{s.Layer, OpAttention}
	case OpMLPNorm:
		return Site{s.Layer, OpAttnResidual}
	case OpMLPUp, OpRouter:
		return Site{s.Layer, OpMLPNorm}
	case OpMLPDown:
		return Site{s.Layer, OpMLPAct}
	case OpFinalNorm:
		return Site{layers - 1, OpMLPResidual}
	case OpLMHead:
		return Site{Final, OpFinalNorm}
	case OpLogProb:
		return Site{Final, OpLMHead}
	}
	return s
}

// swept picks the kernels and path whose policy the drift map sweeps: a
// path with a planted drift model (the engine's first), else the engine.
func swept(st *Setup) (Kernels, Path) {
	if _, ok := planted(st.Infer); ok {
		return st.Infer, Infer
	}
	if _, ok := planted(st.Train); ok {
		return st.Train, Train
	}
	return st.Infer, Infer
}

// MaxSweep is the largest row count or batch size a drift map sweeps.
const MaxSweep = 320

// DriftMap sweeps the dimension the diverging op's schedule may depend on
// and groups the values by the output bits they give the diverging token
// (its inputs are the train path's taps, identical in both paths before
// the divergence):
//
//   - rmsnorm, gemm, logprob: "rows" = 1..MaxSweep, the token's output row
//     with the schedule the kernels choose for a batch of that many rows;
//   - attention computed by a decode step: "batch" = 1..MaxSweep live
//     requests (padded as the engine pads), the token's decode output;
//   - attention otherwise, or when the batch size changes nothing: "kv" =
//     1..the request's length, classes "same" / "differs": whether the
//     train path's and the engine's schedules agree on the query at
//     position kv-1.
//
// Elementwise ops have no schedule: their map is nil.
func DriftMap(ctx context.Context, st *Setup, d *Divergence, taps *Taps) (*spec.DriftMap, error) {
	k, path := swept(st)
	m := st.Model
	c := m.Config
	phase := d.InferCall.Phase
	if path == Train {
		phase = d.TrainCall.Phase
	}
	in, _ := taps.Get(inputSite(d.Site, c.Layers), d.Token)
	x := append([]float32(nil), in...)
	oracle.RoundSlice(c.DType, x)
	call := func(rows int) Schedule {
		return k.Schedule(Call{Site: d.Site, Path: path, Phase: phase, Rows: rows, Heads: c.Heads})
	}
	ops := opsOf(k)
	rows := make([]int, MaxSweep)
	for i := range rows {
		rows[i] = i + 1
	}
	switch d.Site.Op.Kind() {
	case KindRMSNorm:
		w := m.FinalNorm
		if d.Site.Op == OpAttnNorm {
			w = m.Blocks[d.Site.Layer].AttnNorm
		} else if d.Site.Op == OpMLPNorm {
			w = m.Blocks[d.Site.Layer].MLPNorm
		}
		return sweep(ctx, "rows", rows, func(v int) (string, error) {
			y, err := ops.RMSNorm(oracle.RMSNormInput{X: x, W: w, Rows: 1, Hidden: c.Hidden, Eps: c.Eps, Out: oracle.FP32}, call(v).RMSNorm, nil)
			return digest(y), err
		})
	case KindGEMM:
		if d.Site.Op == OpMLPDown && c.Experts > 0 {
			return nil, nil // the experts' weighted sum, not one GEMM: no map of one row
		}
		W, n := gemmWeights(m, d.Site)
		return sweep(ctx, "rows", rows, func(v int) (string, error) {
			y, err := ops.GEMM(oracle.GEMMInput{X: x, W: W, M: 1, K: len(x), N: n, Out: oracle.FP32}, call(v).GEMM, nil)
			return digest(y), err
		})
	case KindLogProb:
		q := st.Requests[d.Request]
		target := int32(0)
		if d.Pos+1 < len(q.Tokens) {
			target = q.Tokens[d.Pos+1]
		}
		return sweep(ctx, "rows", rows, func(v int) (string, error) {
			y, err := ops.LogProb(oracle.LogProbInput{Logits: x, Targets: []int32{target}, Rows: 1, Vocab: c.Vocab}, call(v).LogProb, nil)
			return digest(y), err
		})
	case KindAttention:
		return attentionMap(ctx, st, d, taps, k, path, phase)
	}
	return nil, nil
}

func gemmWeights(m *Model, s Site) ([]float32, int) {
	switch s.Op {
	case OpQKV:
		return m.Blocks[s.Layer].QKV, m.qkvWidth()
	case OpOutProj:
		return m.Blocks[s.Layer].Out, m.Hidden
	case OpMLPUp:
		return m.Blocks[s.Layer].Up, 2 * m.FFN * max(m.Experts, 1)
	case OpRouter:
		return m.Blocks[s.Layer].Router, m.Experts
	case OpMLPDown:
		return m.Blocks[s.Layer].Down, m.Hidden
	}
	return m.LMHead, m.Vocab
}

// attentionMap sweeps the padded decode batch, then the KV length.
func attentionMap(ctx context.Context, st *Setup, d *Divergence, taps *Taps, k Kernels, path Path, phase Phase) (*spec.DriftMap, error) {
	c := st.Model.Config
	H, KH, D := c.Heads, c.KVHeads, c.HeadDim
	HD, KD := H*D, KH*D
	tb, _ := tokenBase(st.Requests)
	qkvSite := Site{d.Site.Layer, OpQKV}
	// q of token pos, keys and values of tokens 0..L-1 of the request, as
	// the op reads them (rounded to the dtype).
	load := func(pos, L int) (q, K, V []float32) {
		row, _ := taps.Get(qkvSite, tb[d.Request]+pos)
		q = append([]float32(nil), row[:HD]...)
		oracle.RoundSlice(c.DType, q)
		for j := range L {
			r, _ := taps.Get(qkvSite, tb[d.Request]+j)
			K = append(K, r[HD:HD+KD]...)
			V = append(V, r[HD+KD:]...)
		}
		oracle.RoundSlice(c.DType, K)
		oracle.RoundSlice(c.DType, V)
		return q, K, V
	}
	decode := func(q, K, V []float32, s oracle.AttentionSchedule) ([]float32, error) {
		return opsOf(k).Decode(oracle.DecodeInput{Q: q, K: [][]float32{K}, V: [][]float32{V}, Heads: H, KVHeads: KH, HeadDim: D, Out: oracle.FP32}, s, nil)
	}
	pad := st.Engine.Pad
	if pad == 0 {
		pad = 64
	}
	if phase == Decode {
		q, K, V := load(d.Pos, d.Pos+1)
		values := make([]int, MaxSweep)
		for i := range values {
			values[i] = i + 1
		}
		dm, err := sweep(ctx, "batch", values, func(v int) (string, error) {
			s := k.Schedule(Call{Site: d.Site, Path: path, Phase: Decode, Rows: (v + pad - 1) / pad * pad, Heads: H})
			y, err := decode(q, K, V, s.Attention)
			return digest(y), err
		})
		if err != nil || len(dm.Classes) > 1 {
			return dm, err
		}
	}
	// kv: does the train path's schedule agree with the engine's?
	ts := st.Train.Schedule(d.TrainCall).Attention
	ts.Splits = 1 // a prefill row is one split
	is := st.Infer.Schedule(d.InferCall).Attention
	if d.InferCall.Phase != Decode {
		is.Splits = 1
	}
	n := 0
	for n < len(st.Requests[d.Request].Tokens) {
		if row, _ := taps.Get(qkvSite, tb[d.Request]+n); row == nil {
			break
		}
		n++
	}
	values := make([]int, n)
	for i := range values {
		values[i] = i + 1
	}
	return sweep(ctx, "kv", values, func(L int) (string, error) {
		q, K, V := load(L-1, L)
		a, err := decode(q, K, V, ts)
		if err != nil {
			return "", err
		}
		b, err := decode(q, K, V, is)
		if err != nil {
			return "", err
		}
		if digest(a) == digest(b) {
			return "same", nil
		}
		return "differs", nil
	})
}

// digest is the class label (driftmap.Digest) of the fp32 bits of y.
func digest(y []float32) string {
	d := driftmap.NewDigest()
	d.Float32s(y)
	return d.Label()
}

// sweep is driftmap.Sweep; an irregular map (Rule empty) gets the onset,
// the last value before the first change, as its rule: "kv <= 51 -> A,
// kv >= 52 -> any of 2 classes (data-dependent)".
func sweep(ctx context.Context, dim string, values []int, classify func(v int) (string, error)) (*spec.DriftMap, error) {
	dm, err := driftmap.Sweep(ctx, dim, values, classify)
	if err != nil || dm.Kind != driftmap.Irregular || dm.Rule != "" {
		return dm, err
	}
	first := dm.Classes[0].Values
	t := 0
	for t < len(first) && first[t] == dm.Values[t] {
		t++
	}
	if t > 0 && t < len(dm.Values) {
		dm.Rule = fmt.Sprintf("%s <= %d -> %s, %s >= %d -> any of %d classes (data-dependent)",
			dim, dm.Values[t-1], dm.Classes[0].Label, dim, dm.Values[t], len(dm.Classes))
	}
	return dm, nil
}
