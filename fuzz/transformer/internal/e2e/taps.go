package e2e

import "math"

// Taps holds, for one path, the output of every op at every layer for each
// token the path computed, and the call (phase, batch rows) that computed
// it.
type Taps struct {
	vals  map[Site][][]float32 // [site][token]; nil where not computed
	calls map[Site][]Call
	n     int
}

// NewTaps returns an empty tap set for a workload of tokens tokens.
func NewTaps(tokens int) *Taps {
	return &Taps{vals: map[Site][][]float32{}, calls: map[Site][]Call{}, n: tokens}
}

func (t *Taps) put(site Site, c Call, tok int, v []float32) {
	if t.vals[site] == nil {
		t.vals[site] = make([][]float32, t.n)
		t.calls[site] = make([]Call, t.n)
	}
	t.vals[site][tok] = append([]float32(nil), v...)
	t.calls[site][tok] = c
}

// Get returns the output of site for token tok, nil when this path did not
// compute it, and the call that computed it.
func (t *Taps) Get(site Site, tok int) ([]float32, Call) {
	if t.vals[site] == nil {
		return nil, Call{}
	}
	return t.vals[site][tok], t.calls[site][tok]
}

// Sites lists every tapped site of a model with layers layers in execution
// order: embed, each layer's LayerOps, then FinalOps.
func Sites(layers int) []Site {
	s := []Site{{0, OpEmbed}}
	for l := range layers {
		for _, op := range LayerOps {
			s = append(s, Site{l, op})
		}
	}
	for _, op := range FinalOps {
		s = append(s, Site{Final, op})
	}
	return s
}

// owner returns the request of token tok (tokenBase numbering) and its
// position in that request.
func owner(reqs []Request, tok int) (int, int) {
	tb, _ := tokenBase(reqs)
	for r := len(tb) - 1; r >= 0; r-- {
		if tok >= tb[r] {
			return r, tok - tb[r]
		}
	}
	return 0, tok
}

// ModelSites lists every tapped site of model c in execution order: Sites,
// with MoEOps after each layer's OpMLPNorm when c has experts.
func ModelSites(c Config) []Site {
	var s []Site
	for _, site := range Sites(c.Layers) {
		s = append(s, site)
		if site.Op == OpMLPNorm && c.Experts > 0 {
			for _, op := range MoEOps {
				s = append(s, Site{site.Layer, op})
			}
		}
	}
	return s
}

// Divergence is the first op output where the two paths differ.
type Divergence struct {
	Site Site
	// Token is the first differing token (tokenBase numbering); Request
	// and Pos name it.
	Token, Request, Pos int
	// Col is the first differing column; A (train) and B (infer) its
	// values.
	Col  int
	A, B float32
	// Tokens counts the tokens differing at this site, Compared those both
	// paths computed.
	Tokens, Compared int
	// TrainCall and InferCall are the calls that computed the token.
	TrainCall, InferCall Call
	// MoE is set by Localize for a model with experts, and Route to the
	// first layer where a token's experts differ (nil: none did).
	MoE   bool
	Route *RouteChange
}

// FirstDivergence walks the sites in execution order and returns the first
// where a token both paths computed has different bits (fp32 bits of the
// stored values), or nil when every tapped output agrees. Because each op
// reads only earlier ops' outputs (attention reads earlier tokens of the
// same layer's QKV, which is an earlier site), the first differing site is
// where the drift entered.
func FirstDivergence(c Config, reqs []Request, a, b *Taps) *Divergence {
	for _, site := range ModelSites(c) {
		var d *Divergence
		compared := 0
		for tok := range a.n {
			va, ca := a.Get(site, tok)
			vb, cb := b.Get(site, tok)
			if va == nil || vb == nil {
				continue
			}
			compared++
			for col := range va {
				if math.Float32bits(va[col]) != math.Float32bits(vb[col]) {
					if d == nil {
						r, p := owner(reqs, tok)
						d = &Divergence{Site: site, Token: tok, Request: r, Pos: p, Col: col,
							A: va[col], B: vb[col], TrainCall: ca, InferCall: cb}
					}
					d.Tokens++
					break
				}
			}
		}
		if d != nil {
			d.Compared = compared
			return d
		}
	}
	return nil
}
