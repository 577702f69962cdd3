package main

import (
	"context"
	"io"

	"github.com/bitparity/bitparity/verdict"
)

// loadKnown reads --known's comma-separated case folders or bucket URLs
// (verdict.LoadKnown: a finding is known when it is the same drift as an
// open case there; docs/trust.md).
func loadKnown(list string, warn io.Writer) (*verdict.Known, error) {
	return verdict.LoadKnown(context.Background(), runSplitList(list), warn)
}
