package main

import (
	"fmt"
	"io"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/spec"
)

// mergeCmd is `bitparity merge --json OUT RESULT.json...`: fuzz.MergeResults
// over the given result files (a run's journal, FILE.journal, or one a
// later run moved aside, FILE.journal.interrupted-STAMP, counts as the
// result it records: what a killed run found) (findings deduplicated by signature, the
// earliest kept; cases summed), written atomically to OUT. Exit 2 for a
// missing, unreadable or mismatched (other seed) file, 3 when OUT cannot be
// written. The shards' corpus folders merge with `bitparity corpus merge`.
func mergeCmd(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("merge", stderr, `usage: bitparity merge --json OUT RESULT.json...

Merges the results of the shards of one campaign (bitparity run --shard i/n --json, one
per host): findings deduplicated by signature (the earliest kept), cases summed.`)
	out := fs.String("json", "", "write the merged result to `FILE` (required)")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		fs.Usage()
		return usageErr("merge: want --json OUT and one or more result files")
	}
	if err := checkOutputFile("json", *out); err != nil {
		return err
	}
	res, err := corpus.MergeResultFiles(fs.Args()...)
	if err != nil {
		return usageErr("merge: %v", err)
	}
	res.Args = append([]string{"merge"}, args...)
	if err := atomicfile.WriteJSON(*out, res); err != nil {
		return withCode(spec.ExitInternal, fmt.Errorf("merge: %w", err))
	}
	fmt.Fprintf(stdout, "%d result(s) merged into %s: %d cases, %d finding(s)\n", fs.NArg(), *out, res.Cases, len(res.Findings))
	return nil
}
