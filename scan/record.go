package scan

import (
	"context"
	"strings"

	"github.com/bitparity/bitparity/spec"
)

// Record is r as a scan results entry (spec.ScanResult, the schema of
// docs/report-schema.md): verdict certified when r has a certificate;
// a path scan's agree when its paths agree at every KV length, with the
// lengths where they differ; fault when a user kernel faulted; else
// drift.
func (r *Result) Record() spec.ScanResult {
	if r.Fault != nil {
		return FaultRecord(r.Spec, r.Fault)
	}
	rec := spec.ScanResult{Scan: r.Spec, Verdict: spec.ScanDrift, Certificate: r.Certificate, Map: r.Map,
		Batches: r.Batches, RowsCompared: r.RowsCompared, Differing: r.Differing,
		Elapsed: spec.Duration(r.Elapsed), Resident: r.Resident, Differ: r.Differ}
	switch {
	case r.Certificate != nil:
		rec.Verdict = spec.ScanCertified
	case strings.Contains(r.Spec.Target, ",") && len(r.Differ) == 0: // a path scan
		rec.Verdict = spec.ScanAgree
	}
	for _, d := range r.Diffs {
		rec.Diffs = append(rec.Diffs, spec.ScanDiff{Draw: d.Draw, Value: d.Value, Rows: d.Rows, FirstRow: d.FirstRow, Against: d.Against, Words: d.Words})
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
	from, _ := pathOps()
	return spec.ScanSpec{Target: ps.Prefill + "," + ps.Decode, Op: from, Dim: spec.ScanKV,
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

// Rerun runs the scan s states again here (Run: a user kernel's with
// opt.Kernel) and returns its scan results entry: a stored scan drift's
// recheck.
func Rerun(ctx context.Context, s spec.ScanSpec, opt Options) (spec.ScanResult, error) {
	if k := opt.Kernel; k != nil {
		if opt.Env == (spec.Env{}) {
			opt.Env = spec.HostEnv()
		}
		opt.Env.KernelHash = k.Record.ImageHash
	}
	r, err := Run(ctx, s, opt)
	if err != nil {
		return spec.ScanResult{}, err
	}
	return r.Record(), nil
}
