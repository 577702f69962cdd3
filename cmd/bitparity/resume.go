package main

import (
	"fmt"
	"io"
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

// resumeLeftovers moves every shard-K folder of work to
// work/previous-STAMP/shard-K, so that this run's workers start empty, and
// collects those whose worker did not finish (no result.json): the result
// rebuilt from result.json.journal when it records the same seed, and the
// corpus folder. A folder it cannot read is said on stderr and skipped.
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
		if _, err := os.Stat(filepath.Join(moved, "result.json")); err == nil {
			continue // that worker finished; its run merged it
		}
		took := false
		if r, _, err := corpus.RebuildJournal(filepath.Join(moved, "result.json"+corpus.JournalSuffix)); err == nil {
			if r.Seed == seed {
				left.results = append(left.results, r)
				took = true
			} else {
				fmt.Fprintf(stderr, "run: %s: a run of seed %d, not %d: its corpus is merged, its counts are not\n", moved, r.Seed, seed)
			}
		} else if !os.IsNotExist(err) {
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
