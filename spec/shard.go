package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one part of a campaign's case stream, so that n processes (one
// per GPU, or one per host) split a campaign without running a case twice.
//
// The stream of a campaign is per pair: pair p (its index in Pairs after
// the filters) draws its cases from its own generator, seeded by (seed, p),
// as draws 0, 1, 2, ... Shard i/n owns draw k of every pair when
//
//	k mod n == i
//
// and skips the others (it still draws them, so every process sees the same
// stream; a draw costs microseconds, a check milliseconds). So the shards
// 0/n ... n-1/n are disjoint and their union is the unsharded stream, on any
// host, for the same seed, targets and relations. The zero Shard (and 0/1)
// owns every draw: the unsharded campaign.
type Shard struct {
	Index, Count int
}

// ParseShard parses "i/n" with 0 <= i < n; "" is the zero Shard.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/n with 0 <= i < n, e.g. 0/4", s)
	}
	return Shard{Index: i, Count: n}, nil
}

// String is "i/n" ("0/1" for the zero Shard).
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, max(1, s.Count)) }

// Owns reports whether draw k of a pair belongs to the shard: k mod Count
// == Index (always true for Count <= 1).
func (s Shard) Owns(k int64) bool { return s.Count <= 1 || k%int64(s.Count) == int64(s.Index) }

// Budget is the shard's share of a budget of m draws of one stream: the
// number of k in [0, m) that it owns, ceil((m-Index)/Count). Shards given
// their Budget of m each run, together, exactly draws 0 ... m-1 of a
// one-pair campaign.
func (s Shard) Budget(m int64) int64 {
	if s.Count <= 1 {
		return m
	}
	if m <= int64(s.Index) {
		return 0
	}
	return (m - int64(s.Index) + int64(s.Count) - 1) / int64(s.Count)
}
