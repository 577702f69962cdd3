package transformer

import (
	"time"

	"github.com/bitparity/bitparity/fuzz"
)

// Share is the time of a full campaign of duration d given to the
// end-to-end transformer (train path vs inference path): a sixth, at most
// 10 s; its controls are found within about 2 s on 2 cores.
func Share(d time.Duration) time.Duration { return min(d/6, 10*time.Second) }

// ShareCampaign is the campaign of the transformer's share: the jobs of
// Source(train, infer) for d, one worker, each control's finding given a
// tenth of d (at least 100 ms) to shrink and the grace all of them
// together (one job, one finding).
func ShareCampaign(d time.Duration, seed uint64, train, infer string) *fuzz.Campaign {
	src := Source(train, infer)
	shrink := max(100*time.Millisecond, d/10)
	return &fuzz.Campaign{Duration: d, Seed: seed, Workers: 1, ShrinkBudget: shrink, Grace: time.Duration(len(src.Jobs)) * shrink,
		Sources: []*fuzz.Source{src}, Targets: []string{"transformer"}}
}
