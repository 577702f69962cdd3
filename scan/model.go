package scan

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// A scan of a model route (op model; docs/protocol.md, "The model route")
// sweeps what its inference engine decodes together. Its items are
// requests: every request of a scan arrives at step 0 and reports every
// response position, so all of a plan's requests are prefilled together
// and then decoded together, step after step. For each draw k (seed
// Seed+k: the route's weights and every token) and every value v:
//
//	requests  the plan of the first v requests of the largest plan (To
//	          requests); each compared with itself decoded alone
//	prompt    the plan of Shape.Seqs requests whose request Watch has
//	          its prompt cut to v tokens (the others fixed); each
//	          compared with itself decoded alone, the watched one at
//	          prompt v: the reference of a prompt length is the route's
//	          own answer for that request alone, never another length's
//
// A request's compared bits are the engine's log-prob of every response
// position and, unless NoTaps, the values of every tap site the route
// reports there (widened to fp32 exactly). The trainer's answer is not
// compared: the campaign's logprob_parity and path_parity relations do
// that. Request r is SeqLen tokens: a prompt of SeqLen-R tokens then a
// response of R = max(1, SeqLen/2) tokens, drawn uniformly from the
// vocabulary by streams 2r (prompt) and 2r+1 (response) of the draw's
// seed; the watched request of a prompt scan takes the first v tokens of
// its prompt stream and keeps its response. The engine pads decode
// batches to a multiple of 1: the decode batch is the value.
//
// A value's class: requests, "=" when every request equals itself alone,
// else the digest of request 0's bits (a function of the schedule the
// engine chooses for v requests); prompt, "A" or "B" (whether a request
// differs), since every prompt length has its own answer.

// modelDefaults are the sizes of a model scan whose flags leave them zero:
// a decoder small enough for a CPU route (Rows: layers, N: ffn).
var modelDefaults = spec.Shape{Rows: 1, Hidden: 32, N: 64, Vocab: 64, Heads: 2, KVHeads: 1, HeadDim: 16, SeqLen: 8, Seqs: 4}

// NormalizeModel fills a model-route scan spec's defaults and checks it:
//
//	op        model (external.ModelOp)
//	dim       requests (default) or prompt
//	from, to  1 <= from <= to
//	shape     rows (layers), hidden, n (ffn), vocab, heads, kv_heads,
//	          head_dim, seq_len (tokens of a request, >= 2): modelDefaults
//	          where zero; prompt: seqs (requests decoded together, default
//	          4) and watch < seqs
//	dists     DefaultDists when empty: one draw each (the name labels the
//	          draw; the route draws from the seed)
//	in, out   bf16 when empty; eps 1e-6 when zero
//
// and the largest plan obeys the model route's limits
// (external.ValidateModelCase).
func NormalizeModel(s spec.ScanSpec) (spec.ScanSpec, error) {
	bad := func(format string, a ...any) (spec.ScanSpec, error) {
		return s, fmt.Errorf("%w: "+format, append([]any{ErrBadSpec}, a...)...)
	}
	if s.Target == "" {
		return bad("no target")
	}
	if s.Op != external.ModelOp {
		return bad("a model-route scan has op %s, not %q", external.ModelOp, s.Op)
	}
	if s.Dim == "" {
		s.Dim = spec.ScanRequests
	}
	if !slices.Contains(spec.ModelScanDims, s.Dim) {
		return bad("a model route scans %v, not %q", spec.ModelScanDims, s.Dim)
	}
	if s.GenVersion == 0 {
		s.GenVersion = spec.GeneratorVersion
	}
	if len(s.Dists) == 0 {
		s.Dists = slices.Clone(DefaultDists)
	}
	for i, d := range s.Dists {
		if !slices.Contains(spec.Dists, d) || slices.Contains(s.Dists[:i], d) {
			return bad("draw %q: want distinct names of %v, one a draw", d, spec.Dists)
		}
	}
	s.In, s.Out = cmpOr(s.In, spec.BF16), cmpOr(s.Out, spec.BF16)
	if s.Eps == 0 {
		s.Eps = 1e-6
	}
	if s.From == 0 {
		s.From = 1
	}
	if s.From < 1 || s.To < s.From {
		return bad("range %d..%d, want 1 <= from <= to", s.From, s.To)
	}
	d := modelDefaults
	for _, f := range []struct{ dst, def *int }{{&s.Shape.Rows, &d.Rows}, {&s.Shape.Hidden, &d.Hidden}, {&s.Shape.N, &d.N},
		{&s.Shape.Vocab, &d.Vocab}, {&s.Shape.Heads, &d.Heads}, {&s.Shape.KVHeads, &d.KVHeads}, {&s.Shape.HeadDim, &d.HeadDim},
		{&s.Shape.SeqLen, &d.SeqLen}} {
		if *f.dst == 0 {
			*f.dst = *f.def
		}
	}
	if s.Shape.SeqLen < 2 {
		return bad("seq_len %d: a request is a prompt and a response of at least one token each", s.Shape.SeqLen)
	}
	switch s.Dim {
	case spec.ScanRequests:
		if s.Shape.Seqs != 0 || s.Watch != 0 {
			return bad("a requests scan decodes 1..to requests: seqs and watch are for a prompt scan")
		}
	case spec.ScanPrompt:
		if s.Shape.Seqs == 0 {
			s.Shape.Seqs = d.Seqs
		}
		if s.Watch < 0 || s.Watch >= s.Shape.Seqs {
			return bad("watched request %d of %d", s.Watch, s.Shape.Seqs)
		}
	}
	n, seqLen := s.To, s.Shape.SeqLen
	if s.Dim == spec.ScanPrompt {
		n, seqLen = s.Shape.Seqs, max(seqLen, s.To+modelResponse(s))
	}
	c := spec.Case{Version: spec.CaseVersion, GenVersion: s.GenVersion, Op: external.ModelOp, Relation: spec.RelLogProbParity,
		Targets: []string{s.Target}, In: s.In, Out: s.Out, Eps: s.Eps, Seed: s.Seed, Shape: spec.Shape{Rows: s.Shape.Rows,
			Hidden: s.Shape.Hidden, N: s.Shape.N, Vocab: s.Shape.Vocab, Heads: s.Shape.Heads, KVHeads: s.Shape.KVHeads,
			HeadDim: s.Shape.HeadDim, Seqs: n, SeqLen: seqLen}}
	if err := external.ValidateModelCase(c); err != nil {
		return bad("the largest plan: %v", err)
	}
	return s, nil
}

func cmpOr(d, def spec.DType) spec.DType {
	if d == "" {
		return def
	}
	return d
}

// modelResponse is the response length of every request of scan s.
func modelResponse(s spec.ScanSpec) int { return max(1, s.Shape.SeqLen/2) }

// newModel fills sc for s, a scan of a model route (NormalizeModel) that
// --exec started (external.LookupModel).
func (sc *scanner) newModel(s spec.ScanSpec) error {
	if s.Op == "" {
		s.Op = external.ModelOp
	}
	if s.Dim == "" || s.Dim == spec.ScanItems {
		s.Dim = spec.ScanRequests // a model route's items are its requests
	}
	s, err := NormalizeModel(s)
	if err != nil {
		return err
	}
	m, ok := external.LookupModel(s.Target)
	if !ok {
		return fmt.Errorf("%w: target %s: no such model route was started (pass its adapter with --exec)", ErrBadSpec, s.Target)
	}
	sc.s, sc.route = s, m
	return nil
}

// modelDraw scans every value on draw k of a model scan and returns each
// value's class.
func (sc *scanner) modelDraw(ctx context.Context, k int) ([]string, error) {
	s := sc.s
	n := s.To
	if s.Dim == spec.ScanPrompt {
		n = s.Shape.Seqs
	}
	pool := make([]external.ModelRequest, n)
	for r := range pool {
		pool[r] = sc.request(k, r, s.Shape.SeqLen-modelResponse(s))
	}
	// each request alone: all of them for requests, the unwatched ones
	// for prompt (the watched one runs alone at each prompt length)
	alone := make([][]uint32, n)
	for r := range pool {
		if s.Dim == spec.ScanPrompt && r == s.Watch {
			continue
		}
		b, err := sc.runBits(ctx, k, pool[r:r+1])
		if err != nil {
			return nil, fmt.Errorf("scan: draw %s, request %d alone: %w", s.Dists[k], r, err)
		}
		alone[r] = b[0]
	}
	cls := make([]string, len(sc.values))
	for i, v := range sc.values {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("scan: %s = %d: %w", s.Dim, v, err)
		}
		var reqs []external.ModelRequest
		ref := alone
		switch s.Dim {
		case spec.ScanRequests:
			reqs = pool[:v]
		case spec.ScanPrompt:
			reqs, ref = slices.Clone(pool), slices.Clone(alone)
			reqs[s.Watch] = sc.request(k, s.Watch, v)
			b, err := sc.runBits(ctx, k, reqs[s.Watch:s.Watch+1])
			if err != nil {
				return nil, fmt.Errorf("scan: draw %s, prompt = %d, the watched request alone: %w", s.Dists[k], v, err)
			}
			ref[s.Watch] = b[0]
		}
		got, err := sc.runBits(ctx, k, reqs)
		if err != nil {
			return nil, fmt.Errorf("scan: draw %s, %s = %d: %w", s.Dists[k], s.Dim, v, err)
		}
		var d []int
		for r := range got {
			if !slices.Equal(got[r], ref[r]) {
				d = append(d, r)
			}
		}
		sc.res.RowsCompared += int64(len(got))
		sc.res.Differing += int64(len(d))
		if len(d) > 0 {
			sc.res.Diffs = append(sc.res.Diffs, Diff{Draw: s.Dists[k], Value: v, Rows: len(d), FirstRow: d[0], Against: "request alone"})
		}
		switch {
		case s.Dim == spec.ScanPrompt && len(d) > 0:
			cls[i] = "B"
		case s.Dim == spec.ScanPrompt:
			cls[i] = "A"
		case len(d) > 0:
			cls[i] = bitsDigest(got[0])
		default:
			cls[i] = "="
		}
		sc.step()
	}
	return cls, nil
}

// request is request r of draw k with a prompt of p tokens: the first p
// of its prompt stream (2r of the draw's seed), then its response (stream
// 2r+1); it arrives at step 0 and reports every response position.
func (sc *scanner) request(k, r, p int) external.ModelRequest {
	seed := sc.s.Seed + uint64(k)
	resp := modelResponse(sc.s)
	q := external.ModelRequest{Prompt: p, Reported: resp, Tokens: make([]int32, 0, p+resp)}
	for i, n := range []int{p, resp} {
		g := rand.New(rand.NewPCG(seed, uint64(2*r+i)))
		for range n {
			q.Tokens = append(q.Tokens, int32(g.IntN(sc.s.Shape.Vocab)))
		}
	}
	return q
}

// runBits runs the plan of reqs on draw k's model and returns each
// request's compared bits: its engine log-probs, then unless NoTaps each
// tap site's values at its positions.
func (sc *scanner) runBits(ctx context.Context, k int, reqs []external.ModelRequest) ([][]uint32, error) {
	s := sc.s
	in, out, err := dtypes(s)
	if err != nil {
		return nil, err
	}
	sh := s.Shape
	p := external.ModelPlan{Layers: sh.Rows, Hidden: sh.Hidden, FFN: sh.N, Vocab: sh.Vocab, Heads: sh.Heads, KVHeads: sh.KVHeads,
		HeadDim: sh.HeadDim, Pad: 1, Seed: s.Seed + uint64(k), In: in, Out: out, Eps: s.Eps, Requests: reqs}
	run, err := sc.route.Run(ctx, p)
	if err != nil {
		return nil, err
	}
	sc.res.Batches++
	bits := make([][]uint32, len(reqs))
	base := 0 // every position is reported: the tap rows are the positions
	for r, q := range reqs {
		for j := range q.Response() {
			bits[r] = append(bits[r], math.Float32bits(run.Infer[base+j]))
		}
		if !s.NoTaps {
			for i := range run.Sites {
				w := run.Widths[i]
				for _, v := range run.TapsInfer[i][base*w : (base+q.Response())*w] {
					bits[r] = append(bits[r], math.Float32bits(v))
				}
			}
		}
		base += q.Response()
	}
	return bits, nil
}

// dtypes parses a model scan's in and out dtypes.
func dtypes(s spec.ScanSpec) (in, out oracle.DType, err error) {
	if in, err = oracle.ParseDType(string(s.In)); err != nil {
		return in, out, fmt.Errorf("%w: in: %w", ErrBadSpec, err)
	}
	if out, err = oracle.ParseDType(string(s.Out)); err != nil {
		return in, out, fmt.Errorf("%w: out: %w", ErrBadSpec, err)
	}
	return in, out, nil
}

// bitsDigest is the class label (driftmap.Digest) of bits.
func bitsDigest(bits []uint32) string {
	h := driftmap.NewDigest()
	h.Uint32s(bits)
	return h.Label()
}
