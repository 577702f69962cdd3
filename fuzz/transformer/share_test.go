package transformer

import (
	"math"
	"testing"
	"time"
)

// TestShare: a sixth of the campaign, at most 10 s of it; the shared
// source carries it and a tenth of that time to shrink a finding.
func TestShare(t *testing.T) {
	for _, tc := range []struct {
		d      time.Duration
		share  float64
		shrink time.Duration
	}{
		{0, 1.0 / 6, time.Second}, // the campaign's default 60 s
		{60 * time.Second, 1.0 / 6, time.Second},
		{6 * time.Second, 1.0 / 6, 100 * time.Millisecond},
		{600 * time.Second, 10.0 / 600, time.Second},
	} {
		src := SharedSource(tc.d, CPU, CPU)
		if math.Abs(Share(tc.d)-tc.share) > 1e-12 || src.Share != Share(tc.d) || src.ShrinkBudget != tc.shrink {
			t.Errorf("%s: share %g (source %g), shrink %s; want %g, %s", tc.d, Share(tc.d), src.Share, src.ShrinkBudget, tc.share, tc.shrink)
		}
	}
}
