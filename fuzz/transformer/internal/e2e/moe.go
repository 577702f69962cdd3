package e2e

import (
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/ops/moeroute"
	"github.com/bitparity/bitparity/oracle"
)

// moe is the MLP of MoE layer l over the batch, from m = RMSNorm(h,
// mlp_norm), with E = Experts, k = TopK, F = FFN:
//
//	z       = m·Wrouter                       fp32, not rounded     (router)
//	id, w   = moeroute.Route(z row, tie=lowest sum=sequential)     (route)
//	g|u     = m·Wup, every expert's gate | up in one GEMM, rounded (mlp_up)
//	a_e     = round(silu(g_e)·u_e) for each expert e                (mlp_act)
//	y_e     = round(a_e·Wdown_e), each with the mlp_down schedule
//	d       = round((w[0]·y_id[0] + w[1]·y_id[1]) + ... + w[k-1]·y_id[k-1])
//	          mul.rn and add.rn in rank order                      (mlp_down)
//
// The router's logits stay fp32, as ops/moerouter's do, so a router GEMM
// that drifts by an ulp moves them. Every expert runs on every row (a
// dropless reference: a row reads only its own experts' outputs), so a
// row's bits depend on its own routing only. The route tap holds a
// token's k ids (as fp32 values) then its k weights.
func (r *runner) moe(l int, b *batch, m []float32) ([]float32, error) {
	c, L := r.m.Config, r.m.Blocks[l]
	E, k, F, H := c.Experts, c.TopK, c.FFN, c.Hidden
	site := Site{l, OpRouter}
	z, err := r.ops.GEMM(oracle.GEMMInput{X: m, W: L.Router, M: b.rows, K: H, N: E, Out: oracle.FP32}, r.call(site, b, b.rows).GEMM, b.real)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.path, site, err)
	}
	z = scatter(b, z, E)
	r.tap(site, b, z, E)
	ids, w := make([]int32, b.rows*k), make([]float32, b.rows*k)
	route := make([]float32, b.rows*2*k)
	for i := range b.rows {
		if b.tok[i] < 0 {
			continue
		}
		moeroute.Route(z[i*E:(i+1)*E], moeroute.Policy{}, ids[i*k:(i+1)*k], w[i*k:(i+1)*k])
		for j := range k {
			route[i*2*k+j] = float32(ids[i*k+j])
			route[i*2*k+k+j] = w[i*k+j]
		}
	}
	r.tap(Site{l, OpRoute}, b, route, 2*k)
	up, err := r.gemm(Site{l, OpMLPUp}, b, m, H, L.Up, E*2*F)
	if err != nil {
		return nil, err
	}
	act := make([]float32, b.rows*E*F)
	for i := range b.rows {
		for e := range E {
			g := up[(i*E+e)*2*F:]
			for j := range F {
				act[(i*E+e)*F+j] = oracle.Mul32(silu(g[j]), g[F+j])
			}
		}
	}
	act = r.round(Site{l, OpMLPAct}, b, act, E*F)
	down := Site{l, OpMLPDown}
	s := r.call(down, b, b.rows).GEMM
	y := make([][]float32, E)
	x := make([]float32, b.rows*F)
	for e := range E {
		for i := range b.rows {
			copy(x[i*F:(i+1)*F], act[(i*E+e)*F:(i*E+e+1)*F])
		}
		ye, err := r.ops.GEMM(oracle.GEMMInput{X: x, W: L.Down[e*F*H : (e+1)*F*H], M: b.rows, K: F, N: H, Out: oracle.FP32}, s, b.real)
		if err != nil {
			return nil, fmt.Errorf("%s %s expert %d: %w", r.path, down, e, err)
		}
		y[e] = scatter(b, ye, H)
		oracle.RoundSlice(c.DType, y[e])
	}
	d := make([]float32, b.rows*H)
	for i := range b.rows {
		if b.tok[i] < 0 {
			continue
		}
		for j := range k {
			we, ye := w[i*k+j], y[ids[i*k+j]][i*H:(i+1)*H]
			for col := range H {
				p := oracle.Mul32(we, ye[col])
				if j > 0 {
					p = oracle.Add32(d[i*H+col], p)
				}
				d[i*H+col] = p
			}
		}
	}
	return r.round(down, b, d, H), nil
}

// RouteChange is the first MoE layer where a token's experts (the set of
// its k ids) differ between the two paths.
type RouteChange struct {
	Layer int
	// Token is the first such token (tokenBase numbering); Request and Pos
	// name it; Train and Infer are its experts on each path, rank order.
	Token, Request, Pos int
	Train, Infer        []int32
	// Tokens counts the tokens whose experts differ at Layer, Compared
	// those both paths routed.
	Tokens, Compared int
}

func (rc *RouteChange) String() string {
	return fmt.Sprintf("experts first change at %s: %d of %d tokens (request %d token %d: train %v, infer %v)",
		Site{rc.Layer, OpRoute}, rc.Tokens, rc.Compared, rc.Request, rc.Pos, rc.Train, rc.Infer)
}

// FirstRouteChange walks the route taps of model c layer by layer and
// returns the first layer where a token both paths routed has another set
// of experts, or nil when every token kept its experts in every layer
// (weights may still differ).
func FirstRouteChange(c Config, reqs []Request, a, b *Taps) *RouteChange {
	if c.Experts == 0 {
		return nil
	}
	k := c.TopK
	experts := func(v []float32) []int32 {
		ids := make([]int32, k)
		for j := range ids {
			ids[j] = int32(v[j])
		}
		return ids
	}
	sorted := func(ids []int32) []int32 { s := slices.Clone(ids); slices.Sort(s); return s }
	for l := range c.Layers {
		var rc *RouteChange
		compared := 0
		for tok := range a.n {
			va, _ := a.Get(Site{l, OpRoute}, tok)
			vb, _ := b.Get(Site{l, OpRoute}, tok)
			if va == nil || vb == nil {
				continue
			}
			compared++
			ea, eb := experts(va), experts(vb)
			if slices.Equal(sorted(ea), sorted(eb)) {
				continue
			}
			if rc == nil {
				rq, p := owner(reqs, tok)
				rc = &RouteChange{Layer: l, Token: tok, Request: rq, Pos: p, Train: ea, Infer: eb}
			}
			rc.Tokens++
		}
		if rc != nil {
			rc.Compared = compared
			return rc
		}
	}
	return nil
}
