package fuzz

import (
	"fmt"
	"time"
)

// group is the pairs of a campaign that share one time share
// (Source.Share): group 0 is the pairs and the jobs of sources without a
// Share, each later group the jobs of one source with a Share.
type group struct {
	share float64 // fraction of the campaign's worker time
	// inTurn: every pair of the group is a source's job, and they take
	// turns by cases (pick).
	inTurn bool
	// controlsFirst: a source's share, whose controls not yet found take
	// their turns before its other jobs (pickGroup).
	controlsFirst bool

	// pick's scratch, under the runner's mu.
	load     int64      // time of the group's cases so far (ns), 1 ms per case in flight
	best     *pairState // its live pair of least load
	bestLoad int64
}

// shareEpsilon is the rounding a sum of shares may carry above 1 (three
// shares of 1/3).
const shareEpsilon = 1e-9

// groups assigns each pair its group (pairState.group) and returns the
// groups; it fails when a share is outside [0, 1] or the shares sum past
// 1, or to 1 with pairs left to share nothing.
func groups(pairs []*pairState) ([]group, error) {
	gs := []group{{share: 1, inTurn: true}}
	at := map[*Source]int{}
	for _, p := range pairs {
		if p.src == nil || p.src.Share == 0 {
			gs[0].inTurn = gs[0].inTurn && p.job != nil
			continue
		}
		s := p.src.Share
		if s < 0 || s > 1 {
			return nil, fmt.Errorf("source %s: share %g: want a fraction of the campaign's time in [0, 1]", p.src.Name, s)
		}
		i, ok := at[p.src]
		if !ok {
			i = len(gs)
			at[p.src] = i
			gs = append(gs, group{share: s, inTurn: true, controlsFirst: true})
			gs[0].share -= s
		}
		p.group = i
	}
	rest := false
	for _, p := range pairs {
		rest = rest || p.group == 0
	}
	if gs[0].share < -shareEpsilon || rest && gs[0].share < shareEpsilon {
		return nil, fmt.Errorf("the sources' shares sum to %.4g: want at most 1, below 1 when pairs share the rest", 1-gs[0].share)
	}
	return gs, nil
}

// controlsFirst is added to the load of a share's job that is not a
// control: its controls still live take their turns first, so they are
// found within the share's first cases (as when the share ran alone
// first), and its other jobs get the share's time after them.
const controlsFirst = 1 << 40

// pickGroup chooses among the live pairs of each group (live: the pair
// is not retired and, when over, owes cases) the one of least load: its
// spent time plus 1 ms per case in flight, or its cases in a group whose
// pairs take turns, a share's controls first (controlsFirst). It returns the best pair of the group whose time so
// far over its share is least, or nil when no pair is live. The caller
// holds r.mu.
func (r *runner) pickGroup(over bool) *pairState {
	for i := range r.groups {
		r.groups[i].load, r.groups[i].best = 0, nil
	}
	for _, p := range r.pairs {
		g := &r.groups[p.group]
		load := p.spent.Load() + p.busy.Load()*int64(time.Millisecond)
		g.load += load
		if g.inTurn {
			load = p.cases.Load()
		}
		if g.controlsFirst && p.job.Expect == "" {
			load += controlsFirst
		}
		if p.retired.Load() || over && !p.owes() {
			continue
		}
		if g.best == nil || load < g.bestLoad {
			g.best, g.bestLoad = p, load
		}
	}
	var best *pairState
	var bestTime float64
	for i := range r.groups {
		g := &r.groups[i]
		if g.best == nil {
			continue
		}
		if t := float64(g.load) / g.share; best == nil || t < bestTime {
			best, bestTime = g.best, t
		}
	}
	return best
}
