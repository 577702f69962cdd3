// Package skiptest runs a campaign against a target that declines some
// batches (target.ErrUnsupported). It lives in its own package so that the
// target it registers stays out of package fuzz's conformance suite.
package skiptest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// bf16Only is the RMSNorm oracle that declines every batch whose input is
// not bf16, the way a kernel built for one dtype does.
type bf16Only struct{ target.Target }

func (t bf16Only) Info() target.Info {
	i := t.Target.Info()
	i.Name = "test-rmsnorm-bf16-only"
	return i
}

func (t bf16Only) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if b.In != oracle.BF16 {
		return nil, fmt.Errorf("%s input: %w", b.In, target.ErrUnsupported)
	}
	return t.Target.Run(ctx, b, rows)
}

func init() {
	target.Register("test-rmsnorm-bf16-only", func() (target.Target, error) {
		o, err := target.Lookup(target.OracleName(spec.OpRMSNorm))
		if err != nil {
			return nil, err
		}
		return bf16Only{o}, nil
	})
}

func TestCampaignSkipsUnsupportedCases(t *testing.T) {
	var last fuzz.Stats
	c := &fuzz.Campaign{
		Duration: 20 * time.Second,
		Seed:     1,
		Targets:  []string{"test-rmsnorm-bf16-only"},
		MaxCases: 60,
		NoShrink: true,
		Progress: func(s fuzz.Stats) { last = s },
	}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatalf("campaign stopped on declined cases: %v", err)
	}
	if len(res.Findings) != 0 {
		t.Fatalf("declined cases became findings: %+v", res.Findings[0])
	}
	if res.Cases != 60 {
		t.Errorf("ran %d cases, want the 60 of --max-cases, declined ones not counted", res.Cases)
	}
	if last.Skipped == 0 {
		t.Errorf("no case was declined: the generator drew only bf16 inputs, the test proves nothing")
	}
	t.Logf("%d cases run, %d declined", res.Cases, last.Skipped)
}
