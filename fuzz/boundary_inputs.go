package fuzz

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// nudgeBoundary applies the boundary-seeking nudge of package
// boundary to the batch of a case with Dist "boundary", whose values
// were first drawn as Dist "normal". Each row (item) is nudged from its own
// values and the tensors every row shares (RMSNorm's w, GEMM's W), with the
// oracle's declared schedule of the op, so a row's bits depend only on
// (seed, tensor, row), never on the batch it sits in:
//
//	rmsnorm:      every row, boundary.RMSNormRows (probes + 3 knobs)
//	gemm:         row i tunes column splitmix(seed^i) % n (boundary.GEMMRow)
//	logprob:      every row in the compare dtype (none when fp32)
//	attn_decode:  every (request, head) on that request's V cache
//	attn_prefill: the last query position of every sequence, every head
//
// Odd rows (row + head odd for attention) aim one fp32 ulp to the odd side
// of the midpoint, even rows at the midpoint itself, so that a drift of
// either sign flips some rows.
//
// Row i is the case's item src.Key(i) (materialize's lazy batches), or
// item i when src is nil (Inputs); a source's filler rows are left alone.
// Attention is nudged only from Inputs (src nil).
func nudgeBoundary(c spec.Case, b *target.Batch, src *target.Source) error {
	switch b.Op {
	case spec.OpRMSNorm:
		in := b.RMSNorm
		rows := boundary.NewRMSNormRows(in.W, in.Eps, b.In, b.Out, target.OracleRMSNormSchedule)
		eachItem(in.Rows, src, func(i int, item uint64) {
			rows.Nudge(in.X[i*in.Hidden:(i+1)*in.Hidden], item%2 == 1)
		})
		return nil
	case spec.OpGEMM:
		g := b.GEMM
		eachItem(g.M, src, func(i int, item uint64) {
			boundary.GEMMRow(g.X[i*g.K:(i+1)*g.K], g.W, g.N, GEMMColumnOf(c, item), b.In, b.Out, target.OracleGEMMSchedule, item%2 == 1)
		})
		return nil
	case spec.OpLogProb:
		cmp, err := oracle.ParseDType(string(c.CompareDType()))
		if err != nil {
			return fmt.Errorf("boundary inputs: compare dtype: %w", err)
		}
		l := b.LogProb
		eachItem(l.Rows, src, func(i int, item uint64) {
			boundary.LogProbRow(l.Logits[i*l.Vocab:(i+1)*l.Vocab], int(l.Targets[i]), b.In, cmp, target.OracleLogProbSchedule, item%2 == 1)
		})
		return nil
	}
	if src != nil {
		return fmt.Errorf("boundary inputs: %s rows by item: %w", b.Op, target.ErrUnsupported)
	}
	switch b.Op {
	case spec.OpAttnDecode:
		d := b.Decode
		hd := d.Heads * d.HeadDim
		eachRow(len(d.K), func(r int) {
			for h := 0; h < d.Heads; h++ {
				boundary.AttendRow(d.Q[r*hd:(r+1)*hd], d.K[r], d.V[r], d.Heads, d.KVHeads, d.HeadDim, h, b.In, b.Out, target.OracleAttentionSchedule, (r+h)%2 == 1)
			}
		})
	case spec.OpAttnPrefill:
		p := b.Prefill
		hd, kvd := p.Heads*p.HeadDim, p.KVHeads*p.HeadDim
		eachRow(p.Seqs, func(s int) {
			last := s*p.SeqLen + p.SeqLen - 1
			k := p.K[s*p.SeqLen*kvd : (s+1)*p.SeqLen*kvd]
			v := p.V[s*p.SeqLen*kvd : (s+1)*p.SeqLen*kvd]
			for h := 0; h < p.Heads; h++ {
				boundary.AttendRow(p.Q[last*hd:(last+1)*hd], k, v, p.Heads, p.KVHeads, p.HeadDim, h, b.In, b.Out, target.OracleAttentionSchedule, (s+h)%2 == 1)
			}
		})
	}
	return nil
}

// GEMMColumnOf is the output column of item item of gemm case c that the
// boundary and sensitive draws tune and a row's power is measured on:
// splitmix(seed ^ item) mod n.
func GEMMColumnOf(c spec.Case, item uint64) int {
	return int(splitmix(c.Seed^item) % uint64(max(c.Shape.N, 1)))
}

// eachItem calls fn(i, item) for the n rows of a batch as eachRow does,
// item being the case's item row i holds (src.Key(i); i when src is nil),
// and skips a source's filler rows.
func eachItem(n int, src *target.Source, fn func(i int, item uint64)) {
	eachRow(n, func(i int) {
		switch {
		case src == nil:
			fn(i, uint64(i))
		case !src.Filled(i):
			fn(i, src.Key(i))
		}
	})
}

// eachRow calls fn(i) for i in [0, n) on up to GOMAXPROCS goroutines; each
// call writes only row i, so the bits never depend on the goroutine count.
func eachRow(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}
