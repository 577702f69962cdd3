package main

import (
	"context"
	"io"

	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
)

// scanGrid runs the two-dimensional map of s, the requests decoded
// together at each KV length of kvs with the lengths between two of
// other rules bisected (scan.ScanGrid), prints it (scan.Grid.Text),
// stores each (certificate or drift) in the corpus folder
// dir and returns the results.
func scanGrid(ctx context.Context, stdout io.Writer, s spec.ScanSpec, kvs []int, opt scan.Options, dir string) ([]spec.ScanResult, error) {
	g, err := scan.ScanGrid(ctx, s, kvs, opt)
	if err != nil {
		return nil, scanErr(err)
	}
	g.Text(stdout)
	var recs []spec.ScanResult
	for _, kv := range g.KV.Values {
		rec := g.Scans[kv].Record()
		if err := storeScan(io.Discard, dir, &rec, opt.Env, nil); err != nil {
			return recs, err
		}
		recs = append(recs, rec)
	}
	return recs, nil
}
