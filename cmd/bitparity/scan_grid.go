package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
)

// parseKVs parses --grid-kv: ascending KV lengths, comma-separated.
func parseKVs(v string) ([]int, error) {
	var kvs []int
	for _, f := range runSplitList(v) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || (len(kvs) > 0 && n <= kvs[len(kvs)-1]) {
			return nil, fmt.Errorf("--grid-kv: %q is not an ascending list of KV lengths >= 1", v)
		}
		kvs = append(kvs, n)
	}
	return kvs, nil
}

// scanGrid runs the two-dimensional map of s, the requests decoded
// together at each KV length of kvs with the lengths between two of
// other rules bisected (scan.ScanGrid), prints its rule and each KV
// length's scan, stores each (certificate or drift) in the corpus folder
// dir and returns the results.
func scanGrid(ctx context.Context, stdout io.Writer, s spec.ScanSpec, kvs []int, opt scan.Options, dir string) ([]spec.ScanResult, error) {
	g, err := scan.ScanGrid(ctx, s, kvs, opt)
	if err != nil {
		return nil, scanErr(err)
	}
	first := g.Scans[g.KV.Values[0]].Spec
	fmt.Fprintf(stdout, "grid: %s, batch %d..%d x kv %d..%d (%d lengths scanned): %s\n",
		first.Target, first.From, first.To, g.KV.Values[0], g.KV.Values[len(g.KV.Values)-1], len(g.Scans), g.Rule)
	var recs []spec.ScanResult
	for _, kv := range g.KV.Values {
		r := g.Scans[kv]
		fmt.Fprintf(stdout, "  kv %d: %s\n", kv, r.Map.Rule)
		rec := r.Record()
		if err := storeScan(io.Discard, dir, &rec, opt.Env, nil); err != nil {
			return recs, err
		}
		recs = append(recs, rec)
	}
	return recs, nil
}
