package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
)

// leftovers is what the workers of an earlier run with the same --work-dir
// left behind without finishing (killed, or their parent was): their
// results, rebuilt from their journals, and their corpus folders.
type leftovers struct {
	results []*spec.Result
	corpora []corpus.Store
	dirs    []string
}

// mergedMark is the file a parallel run leaves in each worker folder it
// merged into its result and corpus.
const mergedMark = "merged"

// resumeLeftovers moves every shard-K folder of work to
// work/previous-STAMP/shard-K, so that this run's workers start empty, and
// collects those that no run merged (no mergedMark: the parent was killed):
// the worker's result (result.json, or rebuilt from its journal when the
// worker was killed too) when it records the same seed, and the corpus
// folder. A folder it cannot read is said on stderr and skipped.
func resumeLeftovers(work string, seed uint64, stderr io.Writer) (leftovers, error) {
	var left leftovers
	shards, err := filepath.Glob(filepath.Join(work, "shard-*"))
	if err != nil || len(shards) == 0 {
		return left, nil
	}
	sort.Strings(shards)
	prev := filepath.Join(work, "previous-"+time.Now().UTC().Format("20060102T150405.000"))
	if err := os.MkdirAll(prev, 0o755); err != nil {
		return left, fmt.Errorf("run: --work-dir: %w", err)
	}
	for _, dir := range shards {
		moved := filepath.Join(prev, filepath.Base(dir))
		if err := os.Rename(dir, moved); err != nil {
			return left, fmt.Errorf("run: --work-dir: move %s aside: %w", dir, err)
		}
		if _, err := os.Stat(filepath.Join(moved, mergedMark)); err == nil {
			continue // its run merged it
		}
		took := false
		if r, err := leftResult(moved); err == nil {
			if r.Seed == seed {
				r.Interrupted = false // this run resumes it: what the worker ran counts, not its stop
				left.results = append(left.results, r)
				took = true
			} else {
				fmt.Fprintf(stderr, "run: %s: a run of seed %d, not %d: its corpus is merged, its counts are not\n", moved, r.Seed, seed)
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "run: %s: %v\n", moved, err)
		}
		if d, err := corpus.OpenDir(filepath.Join(moved, "corpus"), false); err == nil {
			left.corpora = append(left.corpora, d)
			took = true
		}
		if took {
			left.dirs = append(left.dirs, moved)
		}
	}
	if len(left.dirs) > 0 {
		fmt.Fprintf(stderr, "run: resuming what %d interrupted worker(s) left in %s\n", len(left.dirs), prev)
	}
	return left, nil
}

// leftResult is a worker folder's result: result.json, or the result
// rebuilt from result.json's journal.
func leftResult(dir string) (*spec.Result, error) {
	path := filepath.Join(dir, "result.json")
	if _, err := os.Stat(path); err == nil {
		return corpus.ReadResult(path)
	}
	r, _, err := corpus.RebuildJournal(path + corpus.JournalSuffix)
	return r, err
}

// markMerged leaves mergedMark in the folder of every worker whose result
// was merged, and in every resumed folder, so that a later run with the
// same --work-dir does not merge them again.
func markMerged(ws []*worker, left leftovers) {
	dirs := append([]string(nil), left.dirs...)
	for _, w := range ws {
		if w.err == nil {
			dirs = append(dirs, w.dir)
		}
	}
	for _, d := range dirs {
		os.WriteFile(filepath.Join(d, mergedMark), nil, 0o644)
	}
}
