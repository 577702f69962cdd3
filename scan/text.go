package scan

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/reports/words"
)

// Text writes r as `bitparity scan` prints it: the scan in words
// (reports.ScanWords), then what ran (comparisons, batches, where the
// inputs were, the time and rate), the power of its draws, and when a
// row differed its drift map, the classes' details (DetailWords) and up
// to 8 differing steps, those against the items alone (or the oracle)
// first: they decide the classes. A path scan prints the KV lengths
// where its paths differ; a fault, where the kernel faulted. Whether it
// is certified, and where that is stored, the caller says.
func (r *Result) Text(w io.Writer) {
	if ps, ok := PathSpecOf(r.Spec); ok {
		r.pathText(w, ps)
		return
	}
	fmt.Fprintf(w, "scan %s\n", reports.ScanWords(r.Spec))
	if r.Fault != nil {
		fmt.Fprintf(w, "  FAULT: %v\n", r.Fault)
		return
	}
	row, where := words.Compared(r.Spec.Op), "host"
	if r.Spec.Op == external.ModelOp {
		where = "in the route"
	}
	if r.Resident {
		where = "resident on the device"
	}
	rate := float64(r.RowsCompared) / max(r.Elapsed.Seconds(), 1e-9)
	fmt.Fprintf(w, "  %d %s comparisons in %d batches, %s, %.3gs (%.3g %ss/s)\n", r.RowsCompared, row, r.Batches, where, r.Elapsed.Seconds(), rate, row)
	if r.Power != nil {
		fmt.Fprintf(w, "  power: %s\n", PowerWords(r.Power))
	}
	if r.Certificate != nil {
		return
	}
	fmt.Fprintf(w, "  DRIFT: %d %s comparisons differ; drift map: %s\n", r.Differing, row, MapWords(r.Map))
	for _, l := range DetailWords(r) {
		fmt.Fprintf(w, "  %s\n", l)
	}
	late := func(d Diff) int {
		if d.Against == "largest batch" {
			return 1
		}
		return 0
	}
	diffs := slices.Clone(r.Diffs)
	slices.SortStableFunc(diffs, func(a, b Diff) int { return cmp.Compare(late(a), late(b)) })
	for i, d := range diffs {
		if i == 8 {
			fmt.Fprintf(w, "  ... %d more differing steps (--json lists them)\n", len(diffs)-i)
			break
		}
		fmt.Fprintf(w, "  draw %s, %s = %d: %d %s(s) differ from the %s, first %s %d\n", d.Draw, r.Map.Dim, d.Value, d.Rows, row, d.Against, row, d.FirstRow)
		if d.Words != "" {
			fmt.Fprintf(w, "    %s\n", d.Words)
		}
	}
}

// pathText is Text of path scan ps.
func (r *Result) pathText(w io.Writer, p PathSpec) {
	fmt.Fprintf(w, "path scan %s (prefill) against %s (decode) over kv %d..%d: %d sequence(s), heads %d, kv heads %d, head dim %d, %s -> %s, draws %v (seed %d)\n",
		p.Prefill, p.Decode, p.From, p.To, p.Seqs, p.Heads, p.KVHeads, p.HeadDim, p.In, p.Out, p.Dists, p.Seed)
	fmt.Fprintf(w, "  %d row comparisons in %d batches, %.3gs\n", r.RowsCompared, r.Batches, r.Elapsed.Seconds())
	if len(r.Differ) == 0 {
		fmt.Fprintf(w, "  AGREE at every KV length %d..%d\n", p.From, p.To)
		return
	}
	fmt.Fprintf(w, "  DIFFER at %d of %d KV lengths, first %d: %s\n", len(r.Differ), p.To-p.From+1, r.Differ[0], Ranges(r.Differ))
	fmt.Fprintf(w, "  map over %d draw(s): %s\n", max(r.Map.Draws, 1), MapWords(r.Map))
}
