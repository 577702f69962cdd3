package main

import (
	"context"
	"io"
	"time"

	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/spec"
)

// transformerShare is the part of a full campaign's duration given to the
// end-to-end transformer (train path vs inference path): a sixth, at most
// 10 s; its controls are found within about 2 s on 2 cores.
func transformerShare(d time.Duration) time.Duration { return min(d/6, 10*time.Second) }

// runTransformer runs the end-to-end transformer campaign for d, prints its
// summary and folds its jobs, cases and unexpected findings into res. The
// error it returns (unexpected findings or controls not found) decides the
// exit code after the main summary is printed.
func runTransformer(ctx context.Context, stdout io.Writer, res *spec.Result, d time.Duration, seed uint64) (error, error) {
	ts, err := transformer.Campaign{Duration: d, Seed: seed}.Run(ctx)
	if err != nil {
		return nil, err
	}
	if err := ts.WriteText(stdout); err != nil {
		return nil, err
	}
	res.Targets = append(res.Targets, ts.Jobs...)
	res.Cases += ts.Cases
	res.Findings = append(res.Findings, ts.Unexpected...)
	return ts.Err(), nil
}
