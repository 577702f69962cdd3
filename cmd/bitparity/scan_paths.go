package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// scanPaths is `bitparity scan` with two targets (--target PREFILL,DECODE
// or --exec twice): prefill against decode over the KV length (--from,
// --to), --rows sequences a step, at the flags' or the profile's heads,
// KV heads and head dim. It prints the KV lengths where the two differ:
// exit 0 when none, 1 when some, stored in the corpus folder dir as a scan
// drift that corpus recheck reruns.
func scanPaths(ctx context.Context, stdout, stderr io.Writer, s spec.ScanSpec, prof profileFlag, dir string, out *scanResults, saveInputs string) error {
	names := strings.Split(s.Target, ",")
	if len(names) != 2 {
		return usageErr("scan: --target %s: a path scan takes two targets, prefill then decode", s.Target)
	}
	var ops [2]spec.Op
	for i, n := range names {
		t, err := target.Lookup(n)
		if err != nil {
			return usageErr("scan: %v", err)
		}
		ops[i] = t.Info().Op
	}
	if ops[0] == spec.OpAttnDecode && ops[1] == spec.OpAttnPrefill {
		names[0], names[1] = names[1], names[0]
	} else if ops[0] != spec.OpAttnPrefill || ops[1] != spec.OpAttnDecode {
		return usageErr("scan: targets %s (%s) and %s (%s): a path scan takes an attn_prefill and an attn_decode target", names[0], ops[0], names[1], ops[1])
	}
	if s.Dim != spec.ScanItems && s.Dim != spec.ScanKV {
		return usageErr("scan: --dim %s: a path scan sweeps the KV length (kv)", s.Dim)
	}
	s.Op = spec.OpAttnPrefill
	to := s.To
	specs, err := withProfile(s, prof)
	if err != nil {
		return err
	}
	s = specs[0]
	if to == 0 {
		return usageErr("scan: a path scan needs --to, the largest KV length")
	}
	ps := scan.PathSpec{Prefill: names[0], Decode: names[1], From: s.From, To: to, Seqs: s.Shape.Rows,
		Heads: s.Shape.Heads, KVHeads: s.Shape.KVHeads, HeadDim: s.Shape.HeadDim, In: s.In, Out: s.Out,
		Dists: s.Dists, Seed: s.Seed, NoTaps: s.NoTaps, SaveInputs: saveInputs}
	var prog *reports.Steps
	r, err := scan.RunPaths(ctx, ps, scan.Options{Progress: func(done, total int) {
		if prog == nil {
			prog = reports.NewSteps(stderr, "scan", total)
		}
		prog.Update(done)
	}})
	prog.Finish()
	if err != nil {
		if errors.Is(err, scan.ErrBadSpec) {
			return withCode(spec.ExitUsage, err)
		}
		return withCode(spec.ExitInternal, err)
	}
	p := r.Spec
	fmt.Fprintf(stdout, "path scan %s (prefill) against %s (decode) over kv %d..%d: %d sequence(s), heads %d, kv heads %d, head dim %d, %s -> %s, draws %v (seed %d)\n",
		p.Prefill, p.Decode, p.From, p.To, p.Seqs, p.Heads, p.KVHeads, p.HeadDim, p.In, p.Out, p.Dists, p.Seed)
	fmt.Fprintf(stdout, "  %d row comparisons in %d batches, %.3gs\n", r.RowsCompared, r.Batches, r.Elapsed.Seconds())
	rec := r.Record()
	if len(r.Differ) == 0 {
		fmt.Fprintf(stdout, "  AGREE at every KV length %d..%d\n", p.From, p.To)
	} else {
		fmt.Fprintf(stdout, "  DIFFER at %d of %d KV lengths, first %d: %s\n", len(r.Differ), p.To-p.From+1, r.Differ[0], scan.Ranges(r.Differ))
		fmt.Fprintf(stdout, "  map over %d draw(s): %s\n", max(r.Map.Draws, 1), scan.MapWords(r.Map))
	}
	if err := storeScan(stdout, dir, &rec, out.res.Env, nil); err != nil {
		return err
	}
	out.add(rec)
	if err := out.write(); err != nil {
		return err
	}
	if rec.Verdict == spec.ScanDrift {
		return &exitError{code: spec.ExitFinding}
	}
	return nil
}
