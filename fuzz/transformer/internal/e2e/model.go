package e2e

import (
	"fmt"
	"math"

	"github.com/bitparity/bitparity/oracle"
)

// Config is the shape of a model.
type Config struct {
	Layers  int // decoder layers
	Hidden  int // model width
	Heads   int // query heads
	KVHeads int // key/value heads (GQA: Heads is a multiple of KVHeads)
	HeadDim int
	FFN     int // MLP width (the gated MLP's up projection has 2·FFN columns)
	Vocab   int
	Eps     float32      // RMSNorm epsilon
	DType   oracle.DType // weights and activations: the declared training dtype
	// Experts and TopK make every layer's MLP a mixture of experts (moe.go):
	// a router GEMM, then moe_route's top TopK of Experts gated MLPs of
	// width FFN. Experts 0 is the dense MLP.
	Experts, TopK int
	// NearTie makes expert 1's router column expert 0's with every weight
	// one fp32 ulp further from zero, so the two logits of every token sit
	// about an ulp apart: the sensitive router of a control, where a drift
	// of an ulp flips experts.
	NearTie bool
}

// Validate reports whether c describes a model this package can build.
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"layers", c.Layers}, {"hidden", c.Hidden}, {"heads", c.Heads}, {"kv heads", c.KVHeads},
		{"head dim", c.HeadDim}, {"ffn", c.FFN}, {"vocab", c.Vocab}} {
		if f.v < 1 {
			return fmt.Errorf("model: %s = %d, want >= 1", f.name, f.v)
		}
	}
	if c.Heads%c.KVHeads != 0 {
		return fmt.Errorf("model: heads %d is not a multiple of kv heads %d", c.Heads, c.KVHeads)
	}
	if c.Layers > 64 {
		return fmt.Errorf("model: %d layers, at most 64", c.Layers)
	}
	if c.Experts < 0 || c.Experts > MaxExperts || c.Experts > 0 && (c.TopK < 1 || c.TopK > c.Experts) || c.Experts == 0 && c.TopK != 0 {
		return fmt.Errorf("model: %d experts, top %d: want 0 (a dense MLP), or 1..%d experts and top 1..experts", c.Experts, c.TopK, MaxExperts)
	}
	if c.NearTie && c.Experts < 2 {
		return fmt.Errorf("model: a near-tie router needs 2 experts or more, not %d", c.Experts)
	}
	params := c.Vocab*c.Hidden*2 + c.Layers*(c.Hidden*c.qkvWidth()+c.Heads*c.HeadDim*c.Hidden+3*c.Hidden*c.FFN*max(c.Experts, 1)+c.Hidden*c.Experts)
	if params > maxParams || params < 0 {
		return fmt.Errorf("model: %d parameters, at most %d (the memory budget)", params, maxParams)
	}
	return nil
}

// maxParams bounds the weights one case may ask for.
const maxParams = 1 << 26

// MaxExperts bounds a model's experts per layer.
const MaxExperts = 64

// qkvWidth is the width of the fused QKV projection: (Heads + 2·KVHeads)·HeadDim.
func (c Config) qkvWidth() int { return (c.Heads + 2*c.KVHeads) * c.HeadDim }

// Layer holds one decoder layer's weights, row-major, exact in the
// model's dtype.
type Layer struct {
	AttnNorm []float32 // Hidden
	QKV      []float32 // Hidden x (Heads+2·KVHeads)·HeadDim: q | k | v
	Out      []float32 // Heads·HeadDim x Hidden
	MLPNorm  []float32 // Hidden
	// Up is Hidden x 2·FFN: gate | up; in an MoE layer Hidden x
	// Experts·2·FFN, expert e's gate | up at columns e·2·FFN.
	Up []float32
	// Down is FFN x Hidden; in an MoE layer Experts·FFN x Hidden, expert
	// e's at rows e·FFN.
	Down []float32
	// Router is Hidden x Experts, fp32 (MoE layers only): routers are kept
	// in fp32 (Megatron-LM's --moe-router-dtype fp32), not in DType.
	Router []float32
}

// Model is a decoder-only transformer with weights derived from a seed.
type Model struct {
	Config
	Embed     []float32 // Vocab x Hidden
	Blocks    []Layer   // one per layer
	FinalNorm []float32 // Hidden
	LMHead    []float32 // Hidden x Vocab
}

// weight stream ids, part of the weight derivation contract.
const (
	streamEmbed uint64 = iota + 1
	streamAttnNorm
	streamQKV
	streamOut
	streamMLPNorm
	streamUp
	streamDown
	streamFinalNorm
	streamLMHead
	streamPlan
	streamTokens
	streamFiller
	streamSchedule
	streamRouter
	streamExpertDown
	streamMoEShape
)

// NewModel derives every weight of a model of shape c from seed: tensor t
// of layer l is filled from newRNG(seed, t, l) by
//
//	w = round_dtype(float32(gauss() · scale))
//
// with gauss() the portable Irwin–Hall sample of rng.gauss, scale
// 1/sqrt(fan-in) for projections and 1 for embeddings; norm weights are
// round_dtype(float32(1 + gauss()/4)). In an MoE layer the router is
// tensor streamRouter of layer l, the experts' gate | up columns one
// Hidden x Experts·2·FFN tensor of streamUp, and expert e's down
// projection tensor streamExpertDown of index l·MaxExperts + e; router
// weights are float32(gauss() · scale), not rounded to the dtype, and with
// NearTie column 1 is column 0 moved one ulp away from zero. Only
// integer arithmetic and correctly rounded float64 operations are used, so
// every machine derives the same bits.
func NewModel(c Config, seed uint64) (*Model, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m := &Model{Config: c}
	denseIn := func(dt oracle.DType, stream, layer uint64, rows, cols int) []float32 {
		r := newRNG(seed, stream, layer)
		scale := 1 / math.Sqrt(float64(rows))
		w := make([]float32, rows*cols)
		for i := range w {
			w[i] = oracle.Round(dt, float32(r.gauss()*scale))
		}
		return w
	}
	dense := func(stream, layer uint64, rows, cols int) []float32 {
		return denseIn(c.DType, stream, layer, rows, cols)
	}
	norm := func(stream, layer uint64) []float32 {
		r := newRNG(seed, stream, layer)
		w := make([]float32, c.Hidden)
		for i := range w {
			w[i] = oracle.Round(c.DType, float32(1+r.gauss()/4))
		}
		return w
	}
	r := newRNG(seed, streamEmbed, 0)
	m.Embed = make([]float32, c.Vocab*c.Hidden)
	for i := range m.Embed {
		m.Embed[i] = oracle.Round(c.DType, float32(r.gauss()))
	}
	for l := range c.Layers {
		L := uint64(l)
		b := Layer{
			AttnNorm: norm(streamAttnNorm, L),
			QKV:      dense(streamQKV, L, c.Hidden, c.qkvWidth()),
			Out:      dense(streamOut, L, c.Heads*c.HeadDim, c.Hidden),
			MLPNorm:  norm(streamMLPNorm, L),
			Up:       dense(streamUp, L, c.Hidden, 2*c.FFN*max(c.Experts, 1)),
		}
		if c.Experts == 0 {
			b.Down = dense(streamDown, L, c.FFN, c.Hidden)
		} else {
			b.Router = denseIn(oracle.FP32, streamRouter, L, c.Hidden, c.Experts)
			for h := range c.Hidden * btoi(c.NearTie) {
				w0 := b.Router[h*c.Experts]
				b.Router[h*c.Experts+1] = math.Nextafter32(w0, float32(math.Copysign(math.Inf(1), float64(w0))))
			}
			for e := range c.Experts {
				b.Down = append(b.Down, dense(streamExpertDown, L*MaxExperts+uint64(e), c.FFN, c.Hidden)...)
			}
		}
		m.Blocks = append(m.Blocks, b)
	}
	m.FinalNorm = norm(streamFinalNorm, 0)
	m.LMHead = dense(streamLMHead, 0, c.Hidden, c.Vocab)
	return m, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rng is splitmix64 seeded by mix(seed, stream, index): a stream's values
// depend only on those three numbers.
type rng struct{ s uint64 }

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func newRNG(seed, stream, index uint64) *rng {
	return &rng{s: splitmix(splitmix(seed^stream*0x9e3779b97f4a7c15) ^ index)}
}

func (r *rng) next() uint64 { r.s += 0x9e3779b97f4a7c15; return splitmix(r.s) }

// intn returns a value in [0, n) (n >= 1).
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// between returns a value in [lo, hi] (lo <= hi).
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// gauss is an approximately normal sample with mean 0 and variance 1: the
// sum of four uniform 32-bit integers u_i, (Σu_i/2^32 - 2)·sqrt(3). Every
// step is exact or a correctly rounded float64 operation.
func (r *rng) gauss() float64 {
	var s uint64
	for range 4 {
		s += r.next() >> 32
	}
	return (float64(s)/(1<<32) - 2) * math.Sqrt(3)
}
