package fuzz

import (
	"fmt"
	"slices"
	"sort"

	"github.com/bitparity/bitparity/spec"
)

// shardDraw returns the next case of the pair's stream that shard s owns:
// it takes st's cases, counting them in *drawn, until s.Owns(*drawn) held
// for the case taken.
func shardDraw(s spec.Shard, st *stream, op spec.Op, relation string, drawn *int64) spec.Case {
	for {
		c := st.next(op, relation)
		k := *drawn
		*drawn++
		if s.Owns(k) {
			return c
		}
	}
}

// MergeResults merges the results of the shards of one campaign (or of any
// campaigns with the same seed) into one:
//
//   - findings are deduplicated by signature (spec.Signature, or the
//     recorded Signature): of each signature the earliest is kept (FoundAt,
//     then the order of rs), so a drift found by several shards is one
//     finding; the kept findings are sorted by FoundAt;
//   - Cases is the sum over rs, and so is each target's Cases; its
//     Relations are the union; its Findings are recounted over the kept
//     findings by the campaign's rule (a finding counts for the drift models
//     it names, and for invariant targets only when it names no drift
//     model);
//   - Started is the earliest start, Duration the longest (the shards run
//     side by side), Env and Args those of rs[0];
//   - Interrupted when any result is.
//
// Results with different seeds are an error: their streams differ, so
// their union is no campaign's.
func MergeResults(rs ...*spec.Result) (*spec.Result, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("merge results: none given")
	}
	out := &spec.Result{Version: spec.ResultVersion, Started: rs[0].Started, Seed: rs[0].Seed, Env: rs[0].Env,
		Args: append([]string(nil), rs[0].Args...)}
	by := map[string]*spec.TargetStats{}
	var names []string
	type kept struct {
		f     spec.Finding
		order int
	}
	first := map[string]kept{}
	order := 0
	for i, r := range rs {
		if r.Version != spec.ResultVersion {
			return nil, fmt.Errorf("merge results: result %d has version %d, want %d", i, r.Version, spec.ResultVersion)
		}
		if r.Seed != out.Seed {
			return nil, fmt.Errorf("merge results: result %d has seed %d, result 0 seed %d: not shards of one campaign", i, r.Seed, out.Seed)
		}
		if r.Started.Before(out.Started) {
			out.Started = r.Started
		}
		out.Duration = max(out.Duration, r.Duration)
		out.Cases += r.Cases
		out.InvariantCases += r.InvariantCases
		out.Stalls = append(out.Stalls, r.Stalls...)
		out.Interrupted = out.Interrupted || r.Interrupted
		for _, ts := range r.Targets {
			s, ok := by[ts.Target]
			if !ok {
				s = &spec.TargetStats{Target: ts.Target, Invariant: ts.Invariant, Op: ts.Op}
				by[ts.Target] = s
				names = append(names, ts.Target)
			}
			s.Cases += ts.Cases
			for _, rel := range ts.Relations {
				if !slices.Contains(s.Relations, rel) {
					s.Relations = append(s.Relations, rel)
				}
			}
		}
		for _, f := range r.Findings {
			sig := f.Signature
			if sig == "" {
				sig = spec.Signature(f)
				f.Signature = sig
			}
			old, dup := first[sig]
			if !dup || f.FoundAt.Before(old.f.FoundAt) {
				first[sig] = kept{f: f, order: order}
			}
			order++
		}
	}
	ks := make([]kept, 0, len(first))
	for _, k := range first {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if !ks[i].f.FoundAt.Equal(ks[j].f.FoundAt) {
			return ks[i].f.FoundAt.Before(ks[j].f.FoundAt)
		}
		return ks[i].order < ks[j].order
	})
	out.Findings = make([]spec.Finding, 0, len(ks))
	for _, k := range ks {
		out.Findings = append(out.Findings, k.f)
	}
	countFindings(by, out.Findings)
	sort.Strings(names)
	out.Targets = make([]spec.TargetStats, 0, len(names))
	for _, n := range names {
		out.Targets = append(out.Targets, *by[n])
	}
	return out, nil
}
