package inputs

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// nudgeBoundary applies the boundary-seeking nudge of package
// boundary to the batch of a case with Dist "boundary", whose values
// were first drawn as Dist "normal", by its op package
// (ops.CaseOp.Nudge). Each row (item) is nudged from its own values and
// the tensors every row shares (RMSNorm's w, GEMM's W), with the oracle's
// declared schedule of the op, so a row's bits depend only on (seed,
// tensor, row), never on the batch it sits in:
//
//	rmsnorm:      every row, boundary.RMSNormRows (probes + 3 knobs)
//	gemm:         row i tunes column Splitmix(seed^i) % n (boundary.GEMMRow)
//	logprob:      every row in the compare dtype (none when fp32)
//	attn_decode:  every (request, head) on that request's V cache
//	attn_prefill: the last query position of every sequence, every head
//
// Odd rows (row + head odd for attention) aim one fp32 ulp to the odd side
// of the midpoint, even rows at the midpoint itself, so that a drift of
// either sign flips some rows.
//
// Row i is the case's item src.Key(i) (materialize's lazy batches), or
// item i when src is nil (Of); a source's filler rows are left alone.
// An op that is not a token op (attention) is nudged only from Of
// (src nil).
func nudgeBoundary(c spec.Case, b *target.Batch, src *target.Source) error {
	k, in, err := b.Kind()
	if err != nil {
		return fmt.Errorf("boundary inputs: %w", err)
	}
	if src != nil && !k.Token() {
		return fmt.Errorf("boundary inputs: %s rows by item: %w", b.Op, target.ErrUnsupported)
	}
	return k.Nudge(c, in, b.In, b.Out, nudgeRows{src})
}

// nudgeRows are the rows a nudge writes (ops.Nudger): eachItem's of src.
type nudgeRows struct{ src *target.Source }

func (n nudgeRows) Each(rows int, fn func(i int, item uint64)) { eachItem(rows, n.src, fn) }
func (nudgeRows) Mix(x uint64) uint64                          { return Splitmix(x) }

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
