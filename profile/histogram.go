package profile

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
)

// Histogram counts a campaign's drawn cases by the decile of 1..Top (a
// profile's max_tokens) their largest batch is in: the largest of rows
// (requests; a prefill's tokens), the relation's other batch (not for an
// op whose batch dimension (its record's Batch) is sequences: a prefill's
// Rel.Batch counts sequences) and its padded size, cut to
// Top. Add is safe for concurrent use.
type Histogram struct {
	Top    int
	counts [10]atomic.Int64
}

// Add counts case c; Top must be set.
func (h *Histogram) Add(c spec.Case) {
	n := max(c.Shape.Rows, c.Shape.Seqs*c.Shape.SeqLen, c.Rel.Pad)
	if o, ok := c.Op.Info(); !ok || o.Batch.Name != spec.DimSeqs.Name {
		n = max(n, c.Rel.Batch)
	}
	n = min(max(n, 1), h.Top)
	h.counts[(n-1)*10/h.Top].Add(1)
}

// Write writes one line per decile, its range, count and share, under a
// heading naming the profile; nothing when no case was counted.
func (h *Histogram) Write(w io.Writer, name string) {
	var total int64
	for i := range h.counts {
		total += h.counts[i].Load()
	}
	if total == 0 {
		return
	}
	fmt.Fprintf(w, "batch sizes drawn at profile %s (each case's largest batch: rows, requests or prefill tokens), by decile of 1..%d:\n", name, h.Top)
	for d := range h.counts {
		n := h.counts[d].Load()
		fmt.Fprintf(w, "  %5d..%-5d %8d %5.1f%%\n", d*h.Top/10+1, (d+1)*h.Top/10, n, 100*float64(n)/float64(total))
	}
}

// ScanDTypes sets scan s's input and output dtypes and eps to the
// profile's, each unless given (a flag the user set: in, out, eps):
// an op whose outputs have one dtype (ops.FixedOut: log-prob writes fp32)
// takes no out, and only an op that reads an eps (its record's Eps:
// rmsnorm) takes one.
func (p *Profile) ScanDTypes(s *spec.ScanSpec, given func(flag string) bool) {
	if !given("in") {
		s.In = p.DType
	}
	if k, ok := all.Case(s.Op); !given("out") && (!ok || !ops.FixedOut(k)) {
		s.Out = p.DType
	}
	if info, _ := s.Op.Info(); !given("eps") && info.Eps {
		s.Eps = p.Eps
	}
}
