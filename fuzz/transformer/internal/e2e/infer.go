package e2e

import (
	"fmt"

	"github.com/bitparity/bitparity/oracle"
)

// Engine is how the inference path batches requests.
type Engine struct {
	// Pad is the CUDA-graph granularity: a decode batch of B live requests
	// has ceil(B/Pad)·Pad rows. Zero means 64.
	Pad int
	// Fill is the embedding of a filler row (Hidden values); nil means
	// zeros.
	Fill []float32
}

// Inference is what the engine reported.
type Inference struct {
	// LogProbs holds the fp32 log-prob of every response position
	// (positionBase order); a position the engine never reported holds +0,
	// the zero-fill a careless harness would compare.
	LogProbs []float32
	// Reported marks the positions the engine reported.
	Reported []bool
	// Steps counts engine steps; Prefills and Decodes the batches run;
	// MaxBatch the largest padded decode batch.
	Steps, Prefills, Decodes, MaxBatch int
}

// kvCache holds one request's keys and values at one layer,
// [tokens][KVHeads][HeadDim] each.
type kvCache struct{ k, v []float32 }

// RunInfer is the inference path. Engine step s = 0, 1, ...:
//
//  1. prefill: the requests with Arrive == s run their prompts as one batch
//     (phase Prefill, rows = their prompt tokens); their keys and values
//     enter the KV cache; the last prompt token's logits (a head batch of
//     one row per joining request) give response position 0.
//  2. decode: every request that joined before step s and still has
//     positions to report feeds its next given token (teacher forcing) as
//     one row of a batch padded with filler rows to a multiple of e.Pad
//     (phase Decode); attention is oracle.Decode against the KV cache; the
//     logits give its next response position. A request leaves once it has
//     reported Reported positions.
//
// The loop ends when every request has left.
func RunInfer(m *Model, k Kernels, reqs []Request, e Engine, taps *Taps) (*Inference, error) {
	pad := e.Pad
	if pad == 0 {
		pad = 64
	}
	if pad < 1 {
		return nil, fmt.Errorf("infer: pad %d", pad)
	}
	fill := e.Fill
	if fill == nil {
		fill = make([]float32, m.Hidden)
	}
	if len(fill) != m.Hidden {
		return nil, fmt.Errorf("infer: filler has %d values, hidden is %d", len(fill), m.Hidden)
	}
	tb, _ := tokenBase(reqs)
	pb, positions := positionBase(reqs)
	res := &Inference{LogProbs: make([]float32, positions), Reported: make([]bool, positions)}
	cache := make([][]kvCache, m.Layers) // [layer][request]
	for l := range cache {
		cache[l] = make([]kvCache, len(reqs))
	}
	next := make([]int, len(reqs)) // next response position to report
	left := 0
	lastArrive := 0
	for r, q := range reqs {
		if err := q.validate(m.Vocab); err != nil {
			return nil, fmt.Errorf("infer: request %d: %w", r, err)
		}
		lastArrive = max(lastArrive, q.Arrive)
		if q.Reported == 0 {
			left++
		}
	}
	run := &runner{m: m, k: k, ops: opsOf(k), path: Infer, taps: taps}
	c := m.Config
	W, KD := c.qkvWidth(), c.KVHeads*c.HeadDim
	HD := c.Heads * c.HeadDim
	for step := 0; left < len(reqs) || step <= lastArrive; step++ {
		res.Steps++
		// 1. prefill the requests that join now.
		var join []int
		for r, q := range reqs {
			if q.Arrive == step && q.Reported > 0 {
				join = append(join, r)
			}
		}
		if len(join) > 0 {
			res.Prefills++
			b := &batch{phase: Prefill}
			var ids []int32
			seqs := make([]prefillSeq, len(join))
			for i, r := range join {
				q := reqs[r]
				seqs[i] = prefillSeq{start: b.rows, n: q.Prompt}
				for p := range q.Prompt {
					b.tok = append(b.tok, tb[r]+p)
					ids = append(ids, q.Tokens[p])
				}
				b.rows += q.Prompt
			}
			h := run.embed(b, ids, fill)
			h, err := run.layers(b, h, func(l int, qkv []float32) ([]float32, error) {
				for i, r := range join {
					for p := range seqs[i].n {
						row := qkv[(seqs[i].start+p)*W : (seqs[i].start+p+1)*W]
						cache[l][r].k = append(cache[l][r].k, row[HD:HD+KD]...)
						cache[l][r].v = append(cache[l][r].v, row[HD+KD:]...)
					}
				}
				return run.prefillAttention(Site{l, OpAttention}, b, qkv, seqs)
			})
			if err != nil {
				return nil, err
			}
			f, err := run.finalNorm(b, h)
			if err != nil {
				return nil, err
			}
			// the head runs on the last prompt token of each joining request.
			hb := &batch{phase: Prefill, rows: len(join), tok: make([]int, len(join))}
			x := make([]float32, len(join)*c.Hidden)
			targets := make([]int32, len(join))
			for i, r := range join {
				last := seqs[i].start + seqs[i].n - 1
				copy(x[i*c.Hidden:(i+1)*c.Hidden], f[last*c.Hidden:(last+1)*c.Hidden])
				hb.tok[i] = b.tok[last]
				targets[i] = reqs[r].Tokens[reqs[r].Prompt]
			}
			lp, err := run.logprobs(hb, x, targets)
			if err != nil {
				return nil, err
			}
			for i, r := range join {
				res.LogProbs[pb[r]] = lp[i]
				res.Reported[pb[r]] = true
				next[r] = 1
				if next[r] == reqs[r].Reported {
					left++
				}
			}
		}
		// 2. one decode step for the requests that joined before this step.
		var live []int
		for r, q := range reqs {
			if q.Arrive < step && next[r] > 0 && next[r] < q.Reported {
				live = append(live, r)
			}
		}
		if len(live) == 0 {
			continue
		}
		res.Decodes++
		B := len(live)
		P := (B + pad - 1) / pad * pad
		res.MaxBatch = max(res.MaxBatch, P)
		b := &batch{phase: Decode, rows: P, tok: make([]int, P)}
		if B < P {
			b.real = make([]int, B)
		}
		ids := make([]int32, P)
		targets := make([]int32, P)
		for i := range P {
			b.tok[i] = -1
			if i < B {
				r := live[i]
				t := reqs[r].Prompt + next[r] - 1 // the token fed now
				b.tok[i] = tb[r] + t
				ids[i] = reqs[r].Tokens[t]
				targets[i] = reqs[r].Tokens[t+1]
				if b.real != nil {
					b.real[i] = i
				}
			}
		}
		h := run.embed(b, ids, fill)
		h, err := run.layers(b, h, func(l int, qkv []float32) ([]float32, error) {
			in := oracle.DecodeInput{Q: make([]float32, P*HD), K: make([][]float32, P), V: make([][]float32, P),
				Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim, Out: oracle.FP32}
			var sel []int
			for i := range P {
				row := qkv[i*W : (i+1)*W]
				copy(in.Q[i*HD:(i+1)*HD], row[:HD])
				if i >= B { // filler: a one-token cache of its own (unused) k and v
					in.K[i], in.V[i] = row[HD:HD+KD], row[HD+KD:]
					continue
				}
				r := live[i]
				cache[l][r].k = append(cache[l][r].k, row[HD:HD+KD]...)
				cache[l][r].v = append(cache[l][r].v, row[HD+KD:]...)
				in.K[i], in.V[i] = cache[l][r].k, cache[l][r].v
				for h := range c.Heads {
					sel = append(sel, i*c.Heads+h)
				}
			}
			s := run.call(Site{l, OpAttention}, b, P)
			out, err := run.ops.Decode(in, s.Attention, sel)
			if err != nil {
				return nil, err
			}
			// selected row i·Heads+h is request row i, head h: rows stay contiguous.
			return scatter(b, out, HD), nil
		})
		if err != nil {
			return nil, err
		}
		lp, err := run.head(b, h, targets)
		if err != nil {
			return nil, err
		}
		for i, r := range live {
			res.LogProbs[pb[r]+next[r]] = lp[i]
			res.Reported[pb[r]+next[r]] = true
			next[r]++
			if next[r] == reqs[r].Reported {
				left++
			}
		}
	}
	return res, nil
}
