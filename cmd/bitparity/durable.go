package main

import (
	"context"
	"fmt"
	"io"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

// openRecorder opens the --corpus store (optional) and the recorder of a
// campaign's findings (verdict.Recorder: each finding in the store and in
// --json's journal as it is found, replaced by its shrunk form), logging
// on stderr.
func openRecorder(stderr io.Writer, corpusDir, jsonPath string, head spec.Result) (*verdict.Recorder, error) {
	opts := verdict.RecorderOptions{JSON: jsonPath, Head: head, Log: stderr, Source: "campaign"}
	if corpusDir != "" {
		d, err := corpus.Open(context.Background(), corpusDir, true)
		if err != nil {
			return nil, fmt.Errorf("run: --corpus: %w", err)
		}
		opts.Store, opts.Where = d, corpusDir
	}
	rec, err := verdict.NewRecorder(opts)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return rec, nil
}
