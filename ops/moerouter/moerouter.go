// Package moerouter is the op moe_router: a mixture-of-experts router as
// a model runs it, the router GEMM then moe_route (ops/moeroute), so that
// a GEMM whose schedule changes with the batch shows as tokens that change
// experts (the amplification of docs/moe.md).
//
// A row (one token) is H hidden values x (bf16, the default, or fp32).
// The router weights W [H, E] (bf16, normal with σ = 1/√H, tensor
// TensorW) are drawn once per seed and shared by every token of the
// batch. For each token, with the policy's split-K S:
//
//	l[e] = GEMM(x, W[:, e])   oracle.GEMM: S chunks of ceil(H/S) fma steps
//	                          from +0, the partials combined in order
//	                          ((p0+p1)+p2)+..., fp32 logits
//	ids, w = moeroute.Route(l, tie=lowest sum=sequential)
//
// Its outputs are moe_route's: expert_ids (k int32) and weights (k fp32).
package moerouter

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/moeroute"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/values"
)

// Name is the op's name.
const Name = "moe_router"

// DimHidden is the hidden size; experts and top_k are moe_route's.
const DimHidden = "hidden"

// Tensor ids in the seeded generator (package values' contract).
const (
	TensorX uint64 = 0x6d6f6578 // "moex": the hidden states
	TensorW uint64 = 0x6d6f6577 // "moew": the router weights
)

// MaxHidden bounds a row's width.
const MaxHidden = 1 << 16

// Policy is the router GEMM's schedule: its split-K (1: one fma chain per
// logit, the default).
type Policy struct{ SplitK int }

func (p Policy) String() string { return "split_k=" + strconv.Itoa(max(p.SplitK, 1)) }

// gemm is p as an oracle schedule.
func (p Policy) gemm() oracle.GEMMSchedule {
	return oracle.GEMMSchedule{SplitK: max(p.SplitK, 1), Combine: oracle.CrossSequential}
}

// ParsePolicy parses Policy.String's form; "" is split_k=1.
func ParsePolicy(s string) (Policy, error) {
	p := Policy{SplitK: 1}
	for _, f := range strings.Fields(s) {
		v, ok := strings.CutPrefix(f, "split_k=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 1 || n > 64 {
			return Policy{}, fmt.Errorf("moe_router policy %q: unknown %q (want split_k=1..64)", s, f)
		}
		p.SplitK = n
	}
	return p, nil
}

// Batch is the input of moe_router: the tokens' hidden states and the
// router weights they share.
type Batch struct {
	*ops.Rows           // hidden states, one row per token
	W         []float32 // router weights, H x E row-major
}

// Gather returns the tokens idx with the same weights.
func (b *Batch) Gather(idx []int) (ops.Input, error) {
	r, err := b.Rows.Gather(idx)
	if err != nil {
		return nil, err
	}
	return &Batch{Rows: r.(*ops.Rows), W: b.W}, nil
}

// Replace returns a copy whose token at[i] is token i of from; from must
// share b's weights.
func (b *Batch) Replace(at []int, from ops.Input) (ops.Input, error) {
	f, ok := from.(*Batch)
	if !ok {
		return nil, fmt.Errorf("replace: the tokens come from another kind of batch (%T)", from)
	}
	r, err := b.Rows.Replace(at, f.Rows)
	if err != nil {
		return nil, err
	}
	return &Batch{Rows: r.(*ops.Rows), W: b.W}, nil
}

// dims returns H, E and k of s, checked.
func dims(s ops.Shape) (h, e, k int, err error) {
	h = s[DimHidden]
	if h < 1 || h > MaxHidden {
		return 0, 0, 0, fmt.Errorf("moe_router: hidden = %d, want 1..%d", h, MaxHidden)
	}
	if _, err := (moeroute.Op{}).Columns(s); err != nil {
		return 0, 0, 0, fmt.Errorf("moe_router: %w", err)
	}
	return h, s[moeroute.DimExperts], s[moeroute.DimTopK], nil
}

// Weights returns the router weights of seed: row h of tensor TensorW,
// normal with σ = 1/√H, each a bf16 value.
func Weights(seed uint64, h, e int) ([]float32, error) {
	t := values.Tensor{Seed: seed, ID: TensorW, Dist: spec.DistNormal, DType: oracle.BF16, Scale: 1 / math.Sqrt(float64(h))}
	w := make([]float32, h*e)
	for r := range h {
		if err := t.Row(w[r*e:(r+1)*e], uint64(r)); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Logits returns the router logits of every token of b with policy p
// (the package comment's GEMM): row i is l of token i.
func Logits(b *Batch, p Policy) ([]float32, error) {
	h, e, _, err := dims(b.Shape)
	if err != nil {
		return nil, err
	}
	return oracle.GEMM(oracle.GEMMInput{X: b.Values, W: b.W, M: b.Items(), K: h, N: e, Out: oracle.FP32}, p.gemm(), nil)
}

// route computes every row of in with the policy at(items) chooses.
func route(in ops.Input, at func(items int) Policy) (*ops.Output, error) {
	b, ok := in.(*Batch)
	if !ok {
		return nil, fmt.Errorf("moe_router: a batch of %T, want hidden states and router weights (*moerouter.Batch)", in)
	}
	_, e, k, err := dims(b.Shape)
	if err != nil {
		return nil, err
	}
	l, err := Logits(b, at(b.Items()))
	if err != nil {
		return nil, err
	}
	cols, _ := (moeroute.Op{}).Columns(b.Shape)
	o := ops.NewOutput(cols, b.Items())
	ids, w := make([]int32, k), make([]float32, k)
	for r := range b.Items() {
		moeroute.Route(l[r*e:(r+1)*e], moeroute.Policy{}, ids, w)
		for j := range k {
			o.PutInt32(moeroute.ColIDs, r, j, ids[j])
			o.PutFP32(moeroute.ColWeights, r, j, w[j])
		}
	}
	return o, nil
}
