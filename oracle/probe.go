package oracle

import (
	"fmt"
	"math"
	"slices"
)

// RMSNormProbe evaluates one RMSNorm row again and again while single
// elements of x change (a search that tunes a few elements), bitwise as
// RMSNormTaps on that row with Out FP32: it keeps every thread's partial
// sum of squares (s.Reduce) and, for each element, its thread's partial
// before it, so changing x[j] continues the partial of the thread that
// owns j from j on (the fmas of that thread's elements from j to the
// row's end: a few for the last elements) and recombines the partials,
// instead of the whole row.
type RMSNormProbe struct {
	x, w     []float32
	eps      float32
	s        RMSNormSchedule
	lanes    []float32 // thread t's partial sum of squares of x
	before   []float32 // before[j]: the partial of j's thread before x[j]
	scratch  []float32 // combineLanes overwrites its argument
	tap      RMSNormTap
	tapFresh bool
}

// NewRMSNormProbe starts a probe of the row x (len(x) = len(w) >= 1) with
// schedule s. The probe reads x (the caller's slice) and writes it in Set;
// the caller must not change x otherwise.
func NewRMSNormProbe(x, w []float32, eps float32, s RMSNormSchedule) (*RMSNormProbe, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(x) < 1 || len(w) != len(x) {
		return nil, fmt.Errorf("rmsnorm probe: x has %d values, w %d: %w", len(x), len(w), ErrShape)
	}
	T := s.Reduce.Threads
	p := &RMSNormProbe{x: x, w: w, eps: eps, s: s, lanes: make([]float32, T), before: make([]float32, len(x)), scratch: make([]float32, T)}
	for t := range T {
		p.lanes[t] = p.laneFrom(t, t*p.vec(), 0)
	}
	return p, nil
}

// vec is the elements a thread reads at a time (all of them for one
// thread: its partial is one chain over the row).
func (p *RMSNormProbe) vec() int {
	if p.s.Reduce.Threads == 1 {
		return len(p.x)
	}
	return p.s.Reduce.Vec
}

// laneFrom continues thread t's partial a (its partial before x[j]) over
// its elements from j on, as laneSumSquares visits them (fma(x, x, a) over
// x[base : base+V] for base = t·V, t·V + T·V, ...), keeping each
// element's partial before it, and returns the thread's partial.
func (p *RMSNormProbe) laneFrom(t, j int, a float32) float32 {
	T, V, n := p.s.Reduce.Threads, p.vec(), len(p.x)
	for base := j - j%V; base < n; base += T * V {
		for i := max(base, j); i < min(base+V, n); i++ {
			p.before[i] = a
			a = FMA32(p.x[i], p.x[i], a)
		}
	}
	return a
}

// Set stores v in x[j] and continues the partial of the thread that owns
// j from j on.
func (p *RMSNormProbe) Set(j int, v float32) {
	p.x[j] = v
	V := p.vec()
	t := j / V % p.s.Reduce.Threads
	p.lanes[t] = p.laneFrom(t, j, p.before[j])
	p.tapFresh = false
}

// Tap is the row's sum of squares and rstd at the current x.
func (p *RMSNormProbe) Tap() RMSNormTap {
	if !p.tapFresh {
		var ss float32
		if p.s.Reduce.Threads == 1 {
			ss = p.lanes[0]
		} else {
			ss = combineLanes(p.s.Reduce, append(p.scratch[:0], p.lanes...), opAdd)
		}
		mean := Div32(ss, float32(len(p.x)))
		p.tap = RMSNormTap{SumSq: ss, Rstd: Div32(1, Sqrt32(Add32(mean, p.eps)))}
		p.tapFresh = true
	}
	return p.tap
}

// TapWith is the row's sum of squares and rstd at the current x under
// p's schedule with the lane partials combined in warp order w and cross
// order c instead: the partials are the same for every warp and cross
// order of p's threads and vector width, so a probe serves them all.
func (p *RMSNormProbe) TapWith(w WarpOrder, c CrossOrder) RMSNormTap {
	r := p.s.Reduce
	if r.Warp == w && r.Cross == c {
		return p.Tap()
	}
	r.Warp, r.Cross = w, c
	ss := p.lanes[0]
	if r.Threads > 1 {
		ss = combineLanes(r, append(p.scratch[:0], p.lanes...), opAdd)
	}
	return RMSNormTap{SumSq: ss, Rstd: Div32(1, Sqrt32(Add32(Div32(ss, float32(len(p.x))), p.eps)))}
}

// Y is the fp32 output j at the current x.
func (p *RMSNormProbe) Y(j int) float32 { return p.y(j, p.Tap().Rstd) }

func (p *RMSNormProbe) y(j int, rstd float32) float32 {
	if p.s.Order == WeightedScale {
		return Mul32(p.x[j], Mul32(rstd, p.w[j]))
	}
	return Mul32(Mul32(p.x[j], rstd), p.w[j])
}

// Row appends every fp32 output at the current x to dst[:0].
func (p *RMSNormProbe) Row(dst []float32) []float32 {
	dst = slices.Grow(dst[:0], len(p.x))
	rstd := p.Tap().Rstd
	for j := range p.x {
		dst = append(dst, p.y(j, rstd))
	}
	return dst
}

// DecodeProbe evaluates one decode row (one request's query, one head)
// again and again while values of the request's V cache change (a search
// that tunes a few of them), bitwise as Decode of that row with Out FP32.
// The softmax weights (per split m and l, per tile alpha, per token p, the
// split weights w and den) depend on q and K only: the probe computes
// them once and recomputes an output column from them and V as it is now,
// L fmas a column instead of the whole row with its dot products and
// exponentials.
type DecodeProbe struct {
	v       []float32 // the request's V cache, read at every call
	tile    int
	bounds  [][2]int
	weights [][]float32 // per split: attendRange's record
	w       []float32   // per split: Exp32(m_c - M)
	den     float32
	stride  int // KVHeads·HeadDim
	off     int // kv head's offset within a token: (h/group)·HeadDim
	dim     int
	start   []float32 // the row at the starting V (Start)
}

// NewDecodeProbe starts a probe of row r (request r/Heads, head r%Heads)
// of in with schedule s. The probe reads in.V[r/Heads] at every call; K
// and Q must not change.
func NewDecodeProbe(in DecodeInput, s AttentionSchedule, r int) (*DecodeProbe, error) {
	ps, err := NewDecodeProbes(in, []AttentionSchedule{s}, r)
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// NewDecodeProbes starts a probe of row r of in under each schedule of
// ss (NewDecodeProbe), the row's scores fma-dot(q, k[j]) · scale computed
// once for all of them (they do not depend on the schedule).
func NewDecodeProbes(in DecodeInput, ss []AttentionSchedule, r int) ([]*DecodeProbe, error) {
	for _, s := range ss {
		if err := checkAttention(s, in.Heads, in.KVHeads, in.HeadDim); err != nil {
			return nil, err
		}
	}
	if len(ss) == 0 {
		return nil, fmt.Errorf("decode probe: no schedules: %w", ErrShape)
	}
	D, H, KH := in.HeadDim, in.Heads, in.KVHeads
	if r < 0 || r >= len(in.K)*H || len(in.V) != len(in.K) || len(in.Q) != len(in.K)*H*D {
		return nil, fmt.Errorf("decode probe: row %d of %d requests x %d heads: %w", r, len(in.K), H, ErrShape)
	}
	b, h := r/H, r%H
	if len(in.K[b])%(KH*D) != 0 || len(in.V[b]) != len(in.K[b]) {
		return nil, fmt.Errorf("decode probe: request %d cache sizes k %d v %d: %w", b, len(in.K[b]), len(in.V[b]), ErrShape)
	}
	kvh := h / (H / KH)
	L := len(in.K[b]) / (KH * D)
	kv := func(j int) ([]float32, []float32) {
		off := (j*KH + kvh) * D
		return in.K[b][off : off+D], in.V[b][off : off+D]
	}
	q := in.Q[r*D : (r+1)*D]
	scores := make([]float32, L)
	for j := range scores {
		k, _ := kv(j)
		scores[j] = Mul32(fmaChain(0, q, k), Scale(D)) // as attendRange computes it
	}
	ps := make([]*DecodeProbe, len(ss))
	for i, s := range ss {
		ps[i] = newDecodeProbe(q, kv, scores, in.V[b], s, L, KH*D, kvh*D, D)
	}
	return ps, nil
}

// newDecodeProbe starts a probe of query q over the L tokens of kv with
// schedule s, reading the row's scores from scores.
func newDecodeProbe(q []float32, kv func(j int) ([]float32, []float32), scores, v []float32, s AttentionSchedule, L, stride, off, D int) *DecodeProbe {
	p := &DecodeProbe{v: v, tile: s.Tile, bounds: SplitBounds(L, s.Tile, s.Splits), stride: stride, off: off, dim: D}
	scratch := make([]float32, s.Tile)
	parts := make([]partial, len(p.bounds))
	M := float32(math.Inf(-1))
	for c, bd := range p.bounds {
		parts[c] = partial{acc: make([]float32, D), record: true, scores: scores}
		attendRange(q, bd[0], bd[1], s.Tile, Scale(D), kv, &parts[c], scratch)
		p.weights = append(p.weights, parts[c].weights)
		M = Max32(M, parts[c].m)
	}
	p.den = float32(math.Copysign(0, -1))
	for _, part := range parts {
		w := Exp32(Sub32(part.m, M))
		p.w = append(p.w, w)
		p.den = FMA32(w, part.l, p.den)
	}
	p.start = make([]float32, D)
	for d := range p.start {
		num := float32(math.Copysign(0, -1))
		for c, part := range parts {
			num = FMA32(p.w[c], part.acc[d], num)
		}
		p.start[d] = Div32(num, p.den)
	}
	return p
}

// Start is the output row at the V the probe started with, as Row gave
// it then (from the splits' sums made while starting: no column is
// recomputed). The caller must not change it.
func (p *DecodeProbe) Start() []float32 { return p.start }

// Col is output column d (< HeadDim) at the current V.
func (p *DecodeProbe) Col(d int) float32 {
	num := float32(math.Copysign(0, -1))
	for c, bd := range p.bounds {
		ws := p.weights[c]
		acc, k := float32(0), 0
		for t0 := bd[0]; t0 < bd[1]; t0 += p.tile {
			acc = Mul32(acc, ws[k]) // alpha
			k++
			for j := t0; j < min(t0+p.tile, bd[1]); j++ {
				acc = FMA32(ws[k], p.v[j*p.stride+p.off+d], acc) // p_j
				k++
			}
		}
		num = FMA32(p.w[c], acc, num)
	}
	return Div32(num, p.den)
}

// Row appends every output column at the current V to dst[:0].
func (p *DecodeProbe) Row(dst []float32) []float32 {
	dst = slices.Grow(dst[:0], p.dim)
	for d := range p.dim {
		dst = append(dst, p.Col(d))
	}
	return dst
}

// GEMMProbe evaluates one output of a GEMM row, y = Σ_k x[k]·w[k] (w: one
// column of W, K values), again and again while single elements of x
// change, bitwise as GEMM of that row and column with Out FP32 (schedule
// s). Without MMA it keeps every prefix of each split's fma chain, so
// changing x[k] recomputes the chain from k to the end of k's split only;
// with MMA it keeps the chain after each tensor-core step, so changing
// x[k] recomputes the steps from k's to the end of k's split.
type GEMMProbe struct {
	x, w  []float32
	s     GEMMSchedule
	chunk int
	pre   []float32 // pre[k+1]: k's split's chain after element k (MMA: after the step ending at k)
	parts []float32 // scratch for the combine
}

// NewGEMMProbe starts a probe of x (K = len(x) = len(w) values) with
// schedule s. The probe reads x (the caller's slice) and writes it in Set;
// the caller must not change x otherwise.
func NewGEMMProbe(x, w []float32, s GEMMSchedule) (*GEMMProbe, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(x) < 1 || len(w) != len(x) {
		return nil, fmt.Errorf("gemm probe: x has %d values, w %d: %w", len(x), len(w), ErrShape)
	}
	p := &GEMMProbe{x: x, w: w, s: s, chunk: s.Chunk(len(x)), pre: make([]float32, len(x)+1), parts: make([]float32, s.SplitK)}
	for lo := 0; lo < len(x); lo += p.chunk {
		p.update(lo)
	}
	return p, nil
}

// update recomputes the chain of k's split from element k on.
func (p *GEMMProbe) update(k int) {
	lo := k / p.chunk * p.chunk
	hi := min(lo+p.chunk, len(p.x))
	if p.s.MMA != MMANone { // mmaChain of one column, from k's step on
		tc := TensorCoreH200(p.s.MMA)
		b := lo + (k-lo)/tc.K*tc.K
		acc := float32(0)
		if b > lo {
			acc = p.pre[b]
		}
		for ; b < hi; b += tc.K {
			e := min(b+tc.K, hi)
			acc = tc.DotAdd(p.x[b:e], p.w[b:e], acc)
			p.pre[e] = acc
		}
		return
	}
	acc := float32(0)
	if k > lo {
		acc = p.pre[k]
	}
	for i := k; i < hi; i++ {
		acc = FMA32(p.x[i], p.w[i], acc)
		p.pre[i+1] = acc
	}
}

// Set stores v in x[k] and updates k's split.
func (p *GEMMProbe) Set(k int, v float32) {
	p.x[k] = v
	p.update(k)
}

// Y is the output at the current x.
func (p *GEMMProbe) Y() float32 {
	for c := range p.parts {
		p.parts[c] = 0
		if lo := c * p.chunk; lo < len(p.x) {
			p.parts[c] = p.pre[min(lo+p.chunk, len(p.x))]
		}
	}
	return combineParts(p.s.Combine, p.parts, opAdd)
}

// LogProbProbe evaluates one log-prob row (logits x, target id t) again
// and again while single logits change, bitwise as LogProb of that row
// (schedule s). It keeps every thread's partial max and partial sum of
// exponentials: changing x[j] recomputes j's thread's max, and, when the
// row's max keeps its bits, j's thread's sum only (every thread's sum when
// the max moved).
type LogProbProbe struct {
	x        []float32
	t        int
	s        LogProbSchedule
	maxLanes []float32
	sumLanes []float32
	scratch  []float32
	m        float32
}

// NewLogProbProbe starts a probe of the row x with target id t. The probe
// reads x (the caller's slice) and writes it in Set; the caller must not
// change x otherwise.
func NewLogProbProbe(x []float32, t int, s LogProbSchedule) (*LogProbProbe, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(x) < 1 || t < 0 || t >= len(x) {
		return nil, fmt.Errorf("logprob probe: target %d of vocab %d: %w", t, len(x), ErrShape)
	}
	T := s.Reduce.Threads
	p := &LogProbProbe{x: x, t: t, s: s, maxLanes: make([]float32, T), sumLanes: make([]float32, T), scratch: make([]float32, T)}
	for l := range T {
		p.maxLanes[l] = laneMax(x, l, T, s.Reduce.Vec)
	}
	p.m = combineLanes(s.Reduce, append(p.scratch[:0], p.maxLanes...), opMax)
	for l := range T {
		p.sumLanes[l] = laneSumExp(x, p.m, l, T, s.Reduce.Vec)
	}
	return p, nil
}

// Set stores v in x[j] and updates the partials.
func (p *LogProbProbe) Set(j int, v float32) {
	p.x[j] = v
	T, V := p.s.Reduce.Threads, p.s.Reduce.Vec
	l := j / V % T
	p.maxLanes[l] = laneMax(p.x, l, T, V)
	m := combineLanes(p.s.Reduce, append(p.scratch[:0], p.maxLanes...), opMax)
	if math.Float32bits(m) == math.Float32bits(p.m) {
		p.sumLanes[l] = laneSumExp(p.x, m, l, T, V)
		return
	}
	p.m = m
	for l := range T {
		p.sumLanes[l] = laneSumExp(p.x, m, l, T, V)
	}
}

// LP is the row's log-prob at the current x.
func (p *LogProbProbe) LP() float32 {
	sum := combineLanes(p.s.Reduce, append(p.scratch[:0], p.sumLanes...), opAdd)
	return Sub32(Sub32(p.x[p.t], p.m), Log32(sum))
}
