package fuzz

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// sleepSource is a source named name whose one job never fails and whose
// every case takes 1 ms; it appends name to order for each case.
func sleepSource(name string, share float64, mu *sync.Mutex, order *[]string) *Source {
	return &Source{Name: name, Op: "toy", Share: share,
		Check: func(context.Context, spec.Case) (*spec.Finding, error) {
			time.Sleep(time.Millisecond)
			mu.Lock()
			*order = append(*order, name)
			mu.Unlock()
			return nil, nil
		},
		Jobs: []Job{{Name: name, Relation: "toy", Invariant: true, Draw: func(seed uint64) (spec.Case, bool) {
			return spec.Case{Version: 1, Op: "toy", Relation: "toy", Shape: spec.Shape{Rows: 1 + int(seed%4)}}, true
		}}}}
}

// TestCampaignShares: sources with time shares run interleaved by one
// scheduler, not back to back: both have run within the first cases, and
// cases of equal cost split about as the shares do (3:1).
func TestCampaignShares(t *testing.T) {
	var mu sync.Mutex
	var order []string
	c := &Campaign{Duration: 10 * time.Second, Seed: 1, Workers: 1, MaxCases: 200, NoShrink: true, Targets: []string{"big", "small"},
		Sources: []*Source{sleepSource("big", 0.75, &mu, &order), sleepSource("small", 0.25, &mu, &order)}}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Cases != 200 || len(order) != 200 {
		t.Fatalf("%d cases, %d checked; want 200", res.Cases, len(order))
	}
	if first := strings.Join(order[:4], " "); !strings.Contains(first, "big") || !strings.Contains(first, "small") {
		t.Errorf("first cases %s: want both sources interleaved", first)
	}
	n := map[string]int64{}
	for _, ts := range res.Targets {
		n[ts.Target] = ts.Cases
	}
	if r := float64(n["big"]) / float64(max(1, n["small"])); r < 2 || r > 4.5 {
		t.Errorf("cases big %d, small %d (ratio %.2f): want about the shares' 3", n["big"], n["small"], r)
	}
}

// TestPickGroup: the scheduler gives the next case to the group furthest
// behind its share (time over share), and within it to the pair of least
// time; a retired group leaves its time to the others.
func TestPickGroup(t *testing.T) {
	src := &Source{Name: "s", Share: 0.25, Jobs: []Job{{Name: "s"}}}
	pa, pb := &pairState{}, &pairState{}
	js := &pairState{src: src, job: &src.Jobs[0]}
	pairs := []*pairState{pa, pb, js}
	gs, err := groups(pairs)
	if err != nil || len(gs) != 2 || js.group != 1 || gs[0].share != 0.75 {
		t.Fatalf("groups %+v, error %v", gs, err)
	}
	r := &runner{c: &Campaign{}, pairs: pairs, groups: gs}
	pa.spent.Store(int64(4 * time.Second))
	pb.spent.Store(int64(2 * time.Second)) // pairs: 6 s of 0.75, 8 s a share
	js.spent.Store(int64(1 * time.Second)) // source: 1 s of 0.25, 4 s a share
	if p := r.pickGroup(false); p != js {
		t.Fatalf("picked %+v, want the source's job (behind its share)", p)
	}
	js.spent.Store(int64(3 * time.Second)) // 12 s a share: the pairs are behind
	if p := r.pickGroup(false); p != pb {
		t.Fatalf("picked %+v, want the pair of least time", p)
	}
	pa.retired.Store(true)
	pb.retired.Store(true)
	if p := r.pickGroup(false); p != js {
		t.Fatalf("with the pairs retired picked %+v, want the source's job", p)
	}
}

// TestPickGroupControlsFirst: in a source's share, its controls not yet
// found take their turns before its other jobs, fewer cases or not.
func TestPickGroupControlsFirst(t *testing.T) {
	src := &Source{Name: "s", Share: 0.5, Jobs: []Job{{Name: "inv", Invariant: true}, {Name: "ctl", Expect: spec.KindMismatch}}}
	inv, ctl := &pairState{src: src, job: &src.Jobs[0]}, &pairState{src: src, job: &src.Jobs[1], jobIndex: 1}
	pairs := []*pairState{inv, ctl}
	gs, err := groups(pairs)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{c: &Campaign{}, pairs: pairs, groups: gs}
	ctl.cases.Store(5)
	if p := r.pickGroup(false); p != ctl {
		t.Fatalf("picked %s, want the control (5 cases) before the invariant job (0)", p.job.Name)
	}
	ctl.retired.Store(true) // found
	if p := r.pickGroup(false); p != inv {
		t.Fatalf("with the control found picked %+v, want the invariant job", p)
	}
}

// TestGroupsRefuseBadShares: shares outside [0, 1], summing past 1, or to
// 1 with pairs to share the rest, are errors naming the problem.
func TestGroupsRefuseBadShares(t *testing.T) {
	job := func(share float64) *pairState {
		s := &Source{Name: "s", Share: share, Jobs: []Job{{Name: "s"}}}
		return &pairState{src: s, job: &s.Jobs[0]}
	}
	for _, tc := range []struct {
		name  string
		pairs []*pairState
		want  string
	}{
		{"negative", []*pairState{job(-0.5)}, "share -0.5"},
		{"past 1", []*pairState{job(0.6), job(0.6)}, "sum to 1.2"},
		{"1 with pairs", []*pairState{{}, job(1)}, "below 1 when pairs"},
	} {
		if _, err := groups(tc.pairs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := groups([]*pairState{job(1.0 / 3), job(1.0 / 3), job(1.0 / 3)}); err != nil {
		t.Errorf("three shares of 1/3, no pairs: %v", err)
	}
}
