package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
)

// knownSet is the baseline of `run --known DIR`: the open findings of case
// folders (a team's corpus of bugs already filed), keyed by
// spec.Identity: kind, op, relation and targets. The dtypes, the shape and
// the drift map (which one vendor kernel draws differently from case to
// case) are attributes of a sighting, so the same bug seen in another
// dtype is known too. A finding of the run that matches an open case is listed as known
// and does not fail the run; one that matches a case marked fixed is a
// regression and fails it like any new finding.
type knownSet struct {
	open, fixed map[string]string // identity -> case file (folder/name)
}

// loadKnown reads the folders named in a comma-separated list. A folder
// that does not exist or cannot be read is an error; a file in it that
// does not decode is reported on warn and skipped.
func loadKnown(list string, warn io.Writer) (*knownSet, error) {
	k := &knownSet{open: map[string]string{}, fixed: map[string]string{}}
	if list == "" {
		return k, nil
	}
	for _, dir := range strings.Split(list, ",") {
		d, err := corpus.Open(context.Background(), dir, false)
		if err != nil {
			return nil, fmt.Errorf("--known %s: %w", dir, err)
		}
		entries, errs := corpus.Load(d)
		for _, err := range errs {
			fmt.Fprintf(warn, "warning: --known %s: %v (skipped)\n", dir, err)
		}
		for _, e := range entries {
			f := e.File
			if f.Finding == nil {
				continue // a regression case that must keep passing: nothing known
			}
			at := dir + "/" + e.Name
			if f.Status.State == corpus.StateFixed {
				k.fixed[spec.Identity(*f.Finding)] = at
			} else {
				k.open[spec.Identity(*f.Finding)] = at
			}
		}
	}
	return k, nil
}

// match says whether f is a known open finding and names its case file.
func (k *knownSet) match(f spec.Finding) (string, bool) {
	if k == nil {
		return "", false
	}
	at, ok := k.open[spec.Identity(f)]
	return at, ok
}

// regression names the fixed case f matches, if any.
func (k *knownSet) regression(f spec.Finding) (string, bool) {
	if k == nil {
		return "", false
	}
	at, ok := k.fixed[spec.Identity(f)]
	return at, ok
}
