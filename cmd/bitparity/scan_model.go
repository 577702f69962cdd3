package main

import (
	"context"
	"io"

	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
)

// scanModel is `scan --exec ROUTE` of a model route (an adapter whose op
// is transformer): the requests its engine decodes together (--dim
// requests, the route's items) or the watched request's prompt length
// (--dim prompt), every request compared with itself decoded alone
// (scan.RunModel). A --profile gives the model's widths, heads, vocabulary
// and dtype where the flags leave them (its layers are --layers). Its verdict,
// certificate, stored drift and --json (out) are scan's.
func scanModel(ctx context.Context, stdout, stderr io.Writer, s spec.ScanSpec, prof profileFlag, dir string, out *scanResults) error {
	p, err := prof.load()
	if err != nil {
		return err
	}
	if p != nil { // the model's sizes and dtype where the flags left them (--to is the scan's: no default)
		prof.scanDTypes(&s, p)
		for _, f := range []struct {
			dst *int
			v   int
		}{{&s.Shape.Hidden, p.Hidden}, {&s.Shape.N, p.Intermediate}, {&s.Shape.Vocab, p.Vocab},
			{&s.Shape.Heads, p.Heads}, {&s.Shape.KVHeads, p.KVHeads}, {&s.Shape.HeadDim, p.HeadDim}} {
			if *f.dst == 0 {
				*f.dst = f.v
			}
		}
	}
	s.Op = spec.OpModel
	if s.Dim == spec.ScanItems {
		s.Dim = spec.ScanRequests // a model route's items are its requests
	}
	n, err := scan.NormalizeModel(s)
	if err != nil {
		return withCode(spec.ExitUsage, err)
	}
	r, err := scanOne(ctx, stdout, stderr, scan.RunModel, n, out.res.Env, dir, nil)
	if err != nil {
		return err
	}
	out.add(r)
	if err := out.write(); err != nil {
		return err
	}
	if r.Verdict != spec.ScanCertified {
		return &exitError{code: spec.ExitFinding}
	}
	return nil
}
