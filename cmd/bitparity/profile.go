package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/profile"
	"github.com/bitparity/bitparity/spec"
)

// profileFlag is --profile: a model profile's name (profile.Names) or
// file; for run also --shrink-past-profile.
type profileFlag struct {
	fs         *flag.FlagSet
	name       *string
	shrinkPast *bool           // nil where the command does not shrink
	drawn      *batchHistogram // run: the batch sizes the campaign drew
}

func addProfileFlag(fs *flag.FlagSet, what string) profileFlag {
	return profileFlag{fs: fs, name: fs.String("profile", "", fmt.Sprintf("model profile whose inner sizes and dtype %s (one of %s, or a profile file)",
		what, strings.Join(profile.Names(), ", ")))}
}

// addRunProfileFlags adds run's --profile and --shrink-past-profile.
func addRunProfileFlags(fs *flag.FlagSet) profileFlag {
	p := addProfileFlag(fs, "every drawn case takes, with batches over 1..max_tokens")
	p.shrinkPast = fs.Bool("shrink-past-profile", false,
		"let a finding's shrinking reduce the profile's inner sizes too (default: only batch and sequence dimensions shrink, the finding stays at the model's shape)")
	p.drawn = &batchHistogram{}
	return p
}

// load returns the profile named by the flag, nil when it is not set; a
// bad profile is a usage error.
func (p profileFlag) load() (*profile.Profile, error) {
	if *p.name == "" {
		return nil, nil
	}
	pr, err := profile.Load(*p.name)
	if err != nil {
		return nil, usageErr("--profile: %v", err)
	}
	return pr, nil
}

// apply makes the campaign draw the profile's inner sizes and dtypes and
// its batches over 1..max_tokens, and hold them when shrinking unless
// --shrink-past-profile.
func (p profileFlag) apply(c *fuzz.Campaign) error {
	pr, err := p.load()
	if pr != nil {
		c.Reshape, c.MaxTokens = pr.Apply, pr.MaxTokens
		c.ShrinkPastReshape = p.shrinkPast != nil && *p.shrinkPast
		if p.drawn != nil {
			p.drawn.top = pr.MaxTokens
			c.OnDraw = p.drawn.add
		}
	}
	return err
}

// report prints the histogram of the batch sizes the campaign drew, when
// it ran at a profile.
func (p profileFlag) report(w io.Writer) {
	if p.drawn != nil && p.drawn.top > 0 {
		p.drawn.print(w, *p.name)
	}
}

// batchHistogram counts a campaign's drawn cases by the decile of
// 1..top (the profile's max_tokens) their largest batch is in: the
// largest of rows (requests; a prefill's tokens), the relation's other
// batch and its padded size, cut to top.
type batchHistogram struct {
	top    int
	counts [10]atomic.Int64
}

func (h *batchHistogram) add(c spec.Case) {
	n := max(c.Shape.Rows, c.Shape.Seqs*c.Shape.SeqLen, c.Rel.Pad)
	if c.Op != spec.OpAttnPrefill {
		n = max(n, c.Rel.Batch)
	}
	n = min(max(n, 1), h.top)
	h.counts[(n-1)*10/h.top].Add(1)
}

// print writes one line per decile: its range, count and share.
func (h *batchHistogram) print(w io.Writer, name string) {
	var total int64
	for i := range h.counts {
		total += h.counts[i].Load()
	}
	if total == 0 {
		return
	}
	fmt.Fprintf(w, "batch sizes drawn at profile %s (each case's largest batch: rows, requests or prefill tokens), by decile of 1..%d:\n", name, h.top)
	for d := range h.counts {
		n := h.counts[d].Load()
		fmt.Fprintf(w, "  %5d..%-5d %8d %5.1f%%\n", d*h.top/10+1, (d+1)*h.top/10, n, 100*float64(n)/float64(total))
	}
}

// scanDTypes sets a scan's dtypes and eps to the profile's where --in,
// --out and --eps were not given (logprob writes fp32).
func (p profileFlag) scanDTypes(s *spec.ScanSpec, pr *profile.Profile) {
	if !flagSet(p.fs, "in") {
		s.In = pr.DType
	}
	if !flagSet(p.fs, "out") && s.Op != spec.OpLogProb {
		s.Out = pr.DType
	}
	if !flagSet(p.fs, "eps") && s.Op == spec.OpRMSNorm {
		s.Eps = pr.Eps
	}
}
