// Package attention is the two attention ops: prefill (spec.OpAttnPrefill,
// causal attention over whole sequences, its batch an *oracle.PrefillInput
// of Seqs sequences) and decode (spec.OpAttnDecode, one query a request
// against its KV cache, its batch an *oracle.DecodeInput of requests).
// Both run the online-softmax oracle with an oracle.AttentionSchedule.
package attention

import (
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Prefill and Decode implement ops.CaseOp.
type (
	Prefill struct{ attention }
	Decode  struct {
		attention
		ops.RowsBatch
	}
)

var (
	_ ops.CaseOp = Prefill{}
	_ ops.CaseOp = Decode{}
)

// OracleSchedule is the fixed schedule of both oracle targets, which the
// exact CUDA kernels implement too: KV tile 64 with one split.
var OracleSchedule = oracle.AttentionSchedule{Tile: 64, Splits: 1}

// attention is what the two ops share: their schedule and layouts.
type attention struct{}

func (attention) OutDType(out oracle.DType) oracle.DType { return out }
func (attention) Schedule() oracle.Schedule              { return OracleSchedule }
func (attention) Layouts() bool                          { return true }
func (attention) ParseSchedule(s string) (oracle.Schedule, error) {
	return oracle.ParseAttentionSchedule(s)
}

func prefill(in ops.In) *oracle.PrefillInput { return in.(*oracle.PrefillInput) }

func (Prefill) Name() spec.Op       { return spec.OpAttnPrefill }
func (Prefill) Rows(in ops.In) int  { return prefill(in).Rows() }
func (Prefill) Cols(in ops.In) int  { return prefill(in).HeadDim }
func (Prefill) Items(in ops.In) int { return prefill(in).Seqs }
func (Prefill) PadFirst() bool      { return false }
func (Prefill) Balance(c spec.Case, _ int) int {
	return c.Shape.SeqLen // a prefill's threshold is its length (KV tile edges)
}

func (Prefill) RowsPerItem(in ops.In) int {
	p := prefill(in)
	return p.SeqLen * p.Heads
}

func (Prefill) ItemValues(in ops.In, _ int) int {
	p := prefill(in)
	return p.SeqLen * (p.Heads + 2*p.KVHeads) * p.HeadDim
}

func (Prefill) Holds(in ops.In) bool {
	x, ok := in.(*oracle.PrefillInput)
	return ok && x != nil
}

// Cost: causal, position p attends to p+1 keys (2·head_dim+12 a key), 4
// a generated query value and 500 an output row; path parity runs only
// the last position of each sequence.
func (Prefill) Cost(c spec.Case) int64 {
	s := c.Shape
	if c.Relation == spec.RelPathParity {
		return int64(s.Heads)*(int64(s.SeqLen)*int64(2*s.HeadDim+12)+500) +
			4*int64(s.SeqLen)*int64(s.Heads+2*s.KVHeads)*int64(s.HeadDim)
	}
	return int64(s.Heads) * int64(s.SeqLen) * (int64(s.SeqLen+1)/2*int64(2*s.HeadDim+12) + 4*int64(s.HeadDim) + 500)
}

// Reference runs the prefill in fp32 (SplitPrefill: oracle.Prefill at one
// split); it has no taps besides its outputs.
func (p Prefill) Reference(in ops.In, s oracle.Schedule, sel []int) (y, taps []float32, tapCols int, err error) {
	sch, err := ops.ScheduleOf[oracle.AttentionSchedule](p.Name(), s)
	if err != nil {
		return nil, nil, 0, err
	}
	x := *prefill(in)
	x.Out = oracle.FP32
	y, err = SplitPrefill(x, sch, sel)
	return y, nil, 0, err
}

// SplitPrefill is prefill in under schedule s for the selected rows (all
// when rows is nil), into out[i*HeadDim : (i+1)*HeadDim] for the i-th
// selected row, rounded to in.Out. With one split it is oracle.Prefill.
// With s.Splits > 1 it is a split-KV prefill: the row of query position p
// (sequence s, head h) is oracle.Decode of q[s][p][h] over the sequence's
// KV tokens 0..p, cut by oracle.SplitBounds(p+1, Tile, Splits) and
// combined by log-sum-exp (power.PrefillCheck's family is these rows).
func SplitPrefill(in oracle.PrefillInput, s oracle.AttentionSchedule, rows []int) ([]float32, error) {
	if s.Splits <= 1 {
		return oracle.Prefill(in, s, rows)
	}
	if _, err := oracle.Prefill(in, oracle.AttentionSchedule{Tile: s.Tile, Splits: 1}, []int{}); err != nil {
		return nil, err // the shape and schedule checks
	}
	sel, err := oracle.SelectRows(rows, in.Rows())
	if err != nil {
		return nil, fmt.Errorf("prefill: %w", err)
	}
	D, H, KH := in.HeadDim, in.Heads, in.KVHeads
	out := make([]float32, 0, len(sel)*D)
	for _, r := range sel {
		h, p, seq := r%H, (r/H)%in.SeqLen, r/H/in.SeqLen
		kvh := h / (H / KH)
		k, v := make([]float32, (p+1)*D), make([]float32, (p+1)*D)
		for j := range p + 1 {
			off := ((seq*in.SeqLen+j)*KH + kvh) * D
			copy(k[j*D:(j+1)*D], in.K[off:off+D])
			copy(v[j*D:(j+1)*D], in.V[off:off+D])
		}
		d := oracle.DecodeInput{Q: in.Q[r*D : (r+1)*D], K: [][]float32{k}, V: [][]float32{v}, Heads: 1, KVHeads: 1, HeadDim: D, Out: in.Out}
		y, err := oracle.Decode(d, s, nil)
		if err != nil {
			return nil, fmt.Errorf("prefill row %d: %w", r, err)
		}
		out = append(out, y...)
	}
	return out, nil
}

func (Prefill) Gather(in ops.In, ids []int) ops.In {
	src := prefill(in)
	p := *src
	p.Q = ops.GatherRows(src.Q, ids, p.SeqLen*p.Heads*p.HeadDim)
	p.K = ops.GatherRows(src.K, ids, p.SeqLen*p.KVHeads*p.HeadDim)
	p.V = ops.GatherRows(src.V, ids, p.SeqLen*p.KVHeads*p.HeadDim)
	p.Seqs = len(ids)
	return &p
}

func (o Prefill) View(in ops.In, ids []int) ops.In { return o.Gather(in, ids) }

func (Prefill) First(in ops.In, n int) ops.In {
	p := *prefill(in)
	q, kv := p.SeqLen*p.Heads*p.HeadDim, p.SeqLen*p.KVHeads*p.HeadDim
	p.Q, p.K, p.V, p.Seqs = p.Q[:n*q], p.K[:n*kv], p.V[:n*kv], n
	return &p
}

func (Prefill) Fill(in ops.In, from int, v func(int) float32) {
	p := prefill(in)
	ops.FillRows(p.Q, from, p.SeqLen*p.Heads*p.HeadDim, v)
	ops.FillRows(p.K, from, p.SeqLen*p.KVHeads*p.HeadDim, v)
	ops.FillRows(p.V, from, p.SeqLen*p.KVHeads*p.HeadDim, v)
}

func (Prefill) Overlay(dst, src ops.In) {
	d, s := prefill(dst), prefill(src)
	copy(d.Q, s.Q)
	copy(d.K, s.K)
	copy(d.V, s.V)
}

func decode(in ops.In) *oracle.DecodeInput { return in.(*oracle.DecodeInput) }

func (Decode) Name() spec.Op             { return spec.OpAttnDecode }
func (Decode) Rows(in ops.In) int        { return decode(in).Rows() }
func (Decode) Cols(in ops.In) int        { return decode(in).HeadDim }
func (Decode) Items(in ops.In) int       { return len(decode(in).K) }
func (Decode) RowsPerItem(in ops.In) int { return decode(in).Heads }

// PadFirst: a filler request gets the first request's KV length.
func (Decode) PadFirst() bool { return true }

// Balance is min(requests·heads, KV length).
func (Decode) Balance(c spec.Case, n int) int { return min(n*c.Shape.Heads, c.Shape.KV) }

// ItemValues is a request's query and its K and V caches: the first
// request's (firstKV tokens of it in a lazy batch).
func (Decode) ItemValues(in ops.In, firstKV int) int {
	d := decode(in)
	kv := 0
	switch {
	case firstKV >= 0:
		kv = firstKV * d.KVHeads * d.HeadDim
	case len(d.K) > 0:
		kv = len(d.K[0])
	}
	return d.Heads*d.HeadDim + 2*kv
}

func (Decode) Holds(in ops.In) bool {
	x, ok := in.(*oracle.DecodeInput)
	return ok && x != nil
}

// Cost: every head reads the longest cache (2·head_dim+12 a token, 8 its
// generated K and V values) and 500 an output row.
func (Decode) Cost(c spec.Case) int64 {
	s := c.Shape
	return int64(s.Heads) * (int64(s.MaxKV())*int64(2*s.HeadDim+12+8) + 500)
}

// Reference runs oracle.Decode in fp32; it has no taps besides its outputs.
func (d Decode) Reference(in ops.In, s oracle.Schedule, sel []int) (y, taps []float32, tapCols int, err error) {
	sch, err := ops.ScheduleOf[oracle.AttentionSchedule](d.Name(), s)
	if err != nil {
		return nil, nil, 0, err
	}
	x := *decode(in)
	x.Out = oracle.FP32
	y, err = oracle.Decode(x, sch, sel)
	return y, nil, 0, err
}

func (Decode) Gather(in ops.In, ids []int) ops.In {
	src := decode(in)
	d := *src
	d.Q = ops.GatherRows(src.Q, ids, d.Heads*d.HeadDim)
	d.K = make([][]float32, len(ids))
	d.V = make([][]float32, len(ids))
	for i, id := range ids {
		d.K[i] = append([]float32(nil), src.K[id]...)
		d.V[i] = append([]float32(nil), src.V[id]...)
	}
	return &d
}

// View shares each request's KV cache with in: a decode sweep's batch of a
// thousand copies of one request then holds one cache.
func (Decode) View(in ops.In, ids []int) ops.In {
	src := decode(in)
	d := *src
	d.Q = ops.GatherRows(src.Q, ids, d.Heads*d.HeadDim)
	d.K, d.V = make([][]float32, len(ids)), make([][]float32, len(ids))
	for i, id := range ids {
		d.K[i], d.V[i] = src.K[id], src.V[id]
	}
	return &d
}

func (Decode) First(in ops.In, n int) ops.In {
	d := *decode(in)
	d.Q, d.K, d.V = d.Q[:n*d.Heads*d.HeadDim], d.K[:n], d.V[:n]
	return &d
}

func (Decode) Fill(in ops.In, from int, v func(int) float32) {
	d := decode(in)
	ops.FillRows(d.Q, from, d.Heads*d.HeadDim, v)
	for i := from; i < len(d.K); i++ {
		for j := range d.K[i] {
			d.K[i][j] = v(j)
			d.V[i][j] = v(j + 1)
		}
	}
}

// Overlay copies src's queries and shares its requests' caches.
func (Decode) Overlay(dst, src ops.In) {
	d, s := decode(dst), decode(src)
	copy(d.Q, s.Q)
	for i := range s.K {
		d.K[i], d.V[i] = s.K[i], s.V[i]
	}
}

func (Decode) ResidueDraws() uint64 { return 1 }

// ResidueDraws: a prefill's residue case sweeps either its sequences or
// its length, so each gets the share the other ops' batch dimensions get.
func (Prefill) ResidueDraws() uint64 { return 2 }

func (attention) ModelShapes(m spec.Shape, _ []spec.Shape) []spec.Shape {
	return []spec.Shape{{Heads: m.Heads, KVHeads: m.KVHeads, HeadDim: m.HeadDim}}
}

func (attention) AtModel(c *spec.Case, dt spec.DType, _ float32, inner spec.Shape) {
	c.In, c.Out = dt, dt
	s := &c.Shape
	s.Heads, s.KVHeads, s.HeadDim = inner.Heads, inner.KVHeads, inner.HeadDim
}

// WorkPerFMA is 1/8 for a prefill (causal, four score products cost one
// RMSNorm value: seq_len·(seq_len+1)/2·heads·head_dim/4).
func (Prefill) WorkPerFMA() (num, den int) { return 1, 8 }

// WorkPerFMA is 1/2 for a decode (heads·kv·head_dim, the longest of KV
// and KVLens).
func (Decode) WorkPerFMA() (num, den int) { return 1, 2 }

// ShapeFields is seqs, seq_len, then the heads.
func (Prefill) ShapeFields(s *spec.Shape, f ops.Fields) { f.Rows(&s.Seqs); f.KV(&s.SeqLen); f.Heads(s) }

// OwnFields is none.
func (Prefill) OwnFields(*spec.Case, ops.Fields) {}

// ShapeFields is rows, kv, then the heads.
func (Decode) ShapeFields(s *spec.Shape, f ops.Fields) { f.Rows(&s.Rows); f.KV(&s.KV); f.Heads(s) }

// OwnFields is the requests' KV lengths.
func (Decode) OwnFields(c *spec.Case, f ops.Fields) { f.KVLens(&c.Shape.KVLens) }

func (attention) Token() bool                { return false }
func (attention) ItemRows(ops.In) *[]float32 { return nil }
func (attention) LazyBoundary() bool         { return false }

func (Prefill) FuzzWord() string { return "AttnPrefill" }

func (Decode) FuzzWord() string { return "Decode" }

func (Prefill) SmallScale() int64 { return 8 }

func (Decode) SmallScale() int64 { return 1 }
