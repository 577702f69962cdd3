package verdict

import (
	"context"
	"fmt"
	"io"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
)

// CorpusFindings is what the corpus folder or bucket dir adds to a
// night's report: the findings of its open case files (corpus.OpenFindings),
// which tonight's result takes as still failing, and the identities of the
// findings a recheck there marked fixed (FixedIdentities).
func CorpusFindings(ctx context.Context, dir string) (open []spec.Finding, fixed map[string]bool, err error) {
	open, err = corpus.OpenFindings(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	s, err := corpus.Open(ctx, dir, false)
	if err != nil {
		return nil, nil, err
	}
	if c, ok := s.(io.Closer); ok {
		defer c.Close()
	}
	if fixed, err = FixedIdentities(s); err != nil {
		return nil, nil, fmt.Errorf("corpus %s: %w", dir, err)
	}
	return open, fixed, nil
}

// Judge is Status with the reason: the status of tonight's report under
// m, and for a Fail or an Interrupted an error saying why (how many
// unexpected findings, how many new; tonight, the file of the campaign
// that was interrupted).
func (m FailOn) Judge(unexpected, newUnexpected int, interrupted bool, tonight string) (Status, error) {
	switch st := m.Status(unexpected, newUnexpected, interrupted); {
	case st == Fail && m == FailNew:
		return st, fmt.Errorf("%d new unexpected finding(s)", newUnexpected)
	case st == Fail:
		return st, fmt.Errorf("%d unexpected finding(s), %d of them new", unexpected, newUnexpected)
	case st == Interrupted:
		return st, fmt.Errorf("tonight's campaign (%s) was interrupted: not a pass", tonight)
	}
	return Pass, nil
}
