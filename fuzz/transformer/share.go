package transformer

import (
	"time"

	"github.com/bitparity/bitparity/fuzz"
)

// shareCap is the most time of a full campaign the transformer's share
// takes; its controls are found within about 2 s of it on 2 cores.
const shareCap = 10 * time.Second

// Share is the fraction of a full campaign of duration d (0: the
// campaign's default, 60 s) given to the end-to-end transformer (train
// path vs inference path): a sixth, at most 10 s of d.
func Share(d time.Duration) float64 {
	if d <= 0 {
		d = 60 * time.Second
	}
	return min(d/6, shareCap).Seconds() / d.Seconds()
}

// SharedSource is Source(train, infer) as a source of a full campaign of
// duration d: its jobs get Share(d) of the campaign's worker time
// (fuzz.Source.Share), beside the single-op pairs, and each of its
// findings a tenth of that time (at least 100 ms) to shrink.
func SharedSource(d time.Duration, train, infer string) *fuzz.Source {
	if d <= 0 {
		d = 60 * time.Second
	}
	src := Source(train, infer)
	src.Share = Share(d)
	src.ShrinkBudget = max(100*time.Millisecond, min(d/6, shareCap)/10)
	return src
}
