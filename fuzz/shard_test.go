package fuzz

import (
	"context"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
)

// TestShardStreamUnion proves the scheme on the streams themselves: for
// every op x relation and n shards, shard i's j-th case is draw i+j*n of
// the unsharded stream, so the shards are disjoint and their union, with
// their Budget of m each, is exactly draws 0 ... m-1.
func TestShardStreamUnion(t *testing.T) {
	const m = 11
	for _, op := range spec.Ops {
		for _, rel := range []string{spec.RelBatchInvariance, spec.RelPadding, spec.RelDeterminism} {
			seed := int64(inputs.Splitmix(uint64(len(op)) ^ uint64(len(rel))))
			var full []spec.Case
			var drawn int64
			st := &stream{rng: rand.New(rand.NewSource(seed))}
			for k := 0; k < m; k++ {
				full = append(full, shardDraw(spec.Shard{}, st, op, rel, &drawn))
			}
			for n := 2; n <= 4; n++ {
				seen := make([]int, m)
				for i := 0; i < n; i++ {
					s := spec.Shard{Index: i, Count: n}
					st := &stream{rng: rand.New(rand.NewSource(seed))}
					var drawn int64
					for j := int64(0); j < s.Budget(m); j++ {
						c := shardDraw(s, st, op, rel, &drawn)
						k := i + int(j)*n
						if !reflect.DeepEqual(c, full[k]) {
							t.Fatalf("%s/%s shard %v: case %d is not draw %d of the unsharded stream", op, rel, s, j, k)
						}
						seen[k]++
					}
				}
				for k, v := range seen {
					if v != 1 {
						t.Fatalf("%s/%s %d shards: draw %d run %d times, want once", op, rel, n, k, v)
					}
				}
			}
		}
	}
}

// TestCampaignShard: a campaign of one drift pair without shrinking finds
// its first failing draw k*; sharded n ways, the shard that owns k* finds
// exactly that case after k*/n+1 cases, every other shard finds, if
// anything, a later draw of the same stream, and the merged result holds
// the unsharded finding's signature once. (Without shrinking a signature
// also keys the case's dtypes, so later draws may add other signatures.)
func TestCampaignShard(t *testing.T) {
	base := Campaign{Duration: time.Minute, Seed: 7, Targets: []string{"drift-rmsnorm-te-mod32"},
		Relations: []string{spec.RelBatchInvariance}, MaxCases: 400, Workers: 1, NoShrink: true}
	full, err := base.Run(context.Background())
	if err != nil || len(full.Findings) != 1 {
		t.Fatalf("unsharded: %v, %d findings, want 1", err, len(full.Findings))
	}
	kStar := full.Findings[0].CasesBefore - 1
	t.Logf("unsharded: first finding at draw %d", kStar)
	for _, n := range []int{2, 3} {
		var rs []*spec.Result
		for i := 0; i < n; i++ {
			c := base
			c.Shard = spec.Shard{Index: i, Count: n}
			c.MaxCases = c.Shard.Budget(base.MaxCases)
			res, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, res)
			for _, f := range res.Findings {
				k := int64(i) + (f.CasesBefore-1)*int64(n)
				switch {
				case k == kStar && !reflect.DeepEqual(f.Case, full.Findings[0].Case):
					t.Errorf("shard %v: draw %d gave another case than the unsharded campaign's", c.Shard, k)
				case k < kStar:
					t.Errorf("shard %v: finding at draw %d, before the unsharded campaign's first at %d", c.Shard, k, kStar)
				}
			}
			if c.Shard.Owns(kStar) && (len(res.Findings) != 1 || res.Findings[0].CasesBefore-1 != kStar/int64(n)) {
				t.Errorf("shard %v owns draw %d but found %d finding(s)", c.Shard, kStar, len(res.Findings))
			}
		}
		merged, err := MergeResults(rs...)
		if err != nil {
			t.Fatal(err)
		}
		sigs := map[string]int{}
		for _, f := range merged.Findings {
			sigs[f.Signature]++
		}
		if sigs[full.Findings[0].Signature] != 1 || len(sigs) != len(merged.Findings) {
			t.Errorf("%d shards: merged signatures %v, want each once and the unsharded one's %s among them", n, sigs, full.Findings[0].Signature)
		}
	}
}

func TestMergeResults(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	f := func(sig, a string, at int) spec.Finding {
		return spec.Finding{Signature: sig, TargetA: a, Kind: "mismatch", FoundAt: t0.Add(time.Duration(at) * time.Second)}
	}
	ts := func(name string, inv bool, cases int64, rels ...string) spec.TargetStats {
		return spec.TargetStats{Target: name, Invariant: inv, Cases: cases, Relations: rels}
	}
	a := &spec.Result{Version: spec.ResultVersion, Seed: 3, Started: t0.Add(time.Second), Duration: spec.Duration(5 * time.Second), Cases: 10,
		Targets:  []spec.TargetStats{ts("drift-x", false, 6, "padding"), ts("oracle-x", true, 4, "padding")},
		Findings: []spec.Finding{f("s1", "drift-x", 9), f("s2", "drift-x", 3)}}
	b := &spec.Result{Version: spec.ResultVersion, Seed: 3, Started: t0, Duration: spec.Duration(7 * time.Second), Cases: 12,
		Targets:  []spec.TargetStats{ts("drift-x", false, 7, "batch_invariance", "padding"), ts("drift-y", false, 5, "padding")},
		Findings: []spec.Finding{f("s1", "drift-x", 4), f("s3", "drift-y", 8)}}
	got, err := MergeResults(a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := &spec.Result{Version: spec.ResultVersion, Seed: 3, Started: t0, Duration: spec.Duration(7 * time.Second), Cases: 22,
		Targets: []spec.TargetStats{
			{Target: "drift-x", Cases: 13, Findings: 2, Relations: []string{"padding", "batch_invariance"}},
			{Target: "drift-y", Cases: 5, Findings: 1, Relations: []string{"padding"}},
			{Target: "oracle-x", Invariant: true, Cases: 4, Relations: []string{"padding"}},
		},
		Findings: []spec.Finding{f("s2", "drift-x", 3), f("s1", "drift-x", 4), f("s3", "drift-y", 8)}}
	got.Args = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged:\n%+v\nwant\n%+v", got, want)
	}
	if _, err := MergeResults(a, &spec.Result{Version: spec.ResultVersion, Seed: 4}); err == nil {
		t.Error("results of different seeds merged")
	}
	if _, err := MergeResults(); err == nil {
		t.Error("merge of nothing: no error")
	}
}
