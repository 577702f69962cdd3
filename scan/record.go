package scan

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bitparity/bitparity/spec"
)

// Record is r as a scan results entry (spec.ScanResult, the schema of
// docs/report-schema.md): verdict certified when r has a certificate,
// else drift.
func (r *Result) Record() spec.ScanResult {
	rec := spec.ScanResult{Scan: r.Spec, Verdict: spec.ScanDrift, Certificate: r.Certificate, Map: r.Map,
		Batches: r.Batches, RowsCompared: r.RowsCompared, Differing: r.Differing,
		Elapsed: spec.Duration(r.Elapsed), Resident: r.Resident}
	if r.Certificate != nil {
		rec.Verdict = spec.ScanCertified
	}
	for _, d := range r.Diffs {
		rec.Diffs = append(rec.Diffs, spec.ScanDiff{Draw: d.Draw, Value: d.Value, Rows: d.Rows, FirstRow: d.FirstRow, Against: d.Against, Words: d.Words})
	}
	return rec
}

// Record is r as a scan results entry: its spec as PathSpec.ScanSpec
// states it, verdict agree or drift, Differing the number of KV lengths
// where the paths differ (a path scan counts no rows).
func (r *PathResult) Record() spec.ScanResult {
	rec := spec.ScanResult{Scan: r.Spec.ScanSpec(), Verdict: spec.ScanAgree, Map: r.Map, Differ: r.Differ,
		Batches: r.Batches, RowsCompared: r.RowsCompared, Differing: int64(len(r.Differ)),
		Elapsed: spec.Duration(r.Elapsed)}
	if len(r.Differ) > 0 {
		rec.Verdict = spec.ScanDrift
	}
	return rec
}

// FaultRecord is the scan results entry of a scan of s that ended in
// fault f.
func FaultRecord(s spec.ScanSpec, f *Fault) spec.ScanResult {
	return spec.ScanResult{Scan: s, Verdict: spec.ScanFault, Fault: f.Error()}
}

// ScanSpec states ps as `scan --target PREFILL,DECODE` reads it: target
// "PREFILL,DECODE", op attn_prefill, dim kv, shape.rows the sequences of
// each step, shape.heads, kv_heads and head_dim.
func (ps PathSpec) ScanSpec() spec.ScanSpec {
	return spec.ScanSpec{Target: ps.Prefill + "," + ps.Decode, Op: spec.OpAttnPrefill, Dim: spec.ScanKV,
		From: ps.From, To: ps.To, Shape: spec.Shape{Rows: ps.Seqs, Heads: ps.Heads, KVHeads: ps.KVHeads, HeadDim: ps.HeadDim},
		In: ps.In, Out: ps.Out, Dists: ps.Dists, Seed: ps.Seed, NoTaps: ps.NoTaps, GenVersion: ps.GenVersion}
}

// PathSpecOf is the path scan s states (the inverse of PathSpec.ScanSpec);
// false when s is not a path scan (its target names no two targets).
func PathSpecOf(s spec.ScanSpec) (PathSpec, bool) {
	pre, dec, ok := strings.Cut(s.Target, ",")
	if !ok {
		return PathSpec{}, false
	}
	return PathSpec{Prefill: pre, Decode: dec, From: s.From, To: s.To, Seqs: s.Shape.Rows,
		Heads: s.Shape.Heads, KVHeads: s.Shape.KVHeads, HeadDim: s.Shape.HeadDim, In: s.In, Out: s.Out,
		Dists: s.Dists, Seed: s.Seed, GenVersion: s.GenVersion, NoTaps: s.NoTaps}, true
}

// Rerun runs the scan s states again here, whichever kind it is: a path
// scan (RunPaths), a model route's (RunModel), an op package's target's
// (RunOp) or a target's (Run). A user
// kernel's scan (target kernel:NAME) runs in a worker, which only the
// caller can start: Rerun refuses it.
func Rerun(ctx context.Context, s spec.ScanSpec, opt Options) (spec.ScanResult, error) {
	if ps, ok := PathSpecOf(s); ok {
		r, err := RunPaths(ctx, ps, opt)
		if err != nil {
			return spec.ScanResult{}, err
		}
		return r.Record(), nil
	}
	if strings.HasPrefix(s.Target, "kernel:") {
		return spec.ScanResult{}, fmt.Errorf("%w: %s is a user kernel: its scan runs in a worker (RunWorker)", ErrBadSpec, s.Target)
	}
	run := Run
	switch {
	case s.Op == spec.OpModel:
		run = RunModel
	case IsOpTarget(s.Target):
		run = RunOp
	}
	r, err := run(ctx, s, opt)
	var fault *Fault
	if errors.As(err, &fault) {
		return FaultRecord(s, fault), nil
	}
	if err != nil {
		return spec.ScanResult{}, err
	}
	return r.Record(), nil
}
