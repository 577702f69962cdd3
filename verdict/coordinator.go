package verdict

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
)

// Worker is one process of a coordinated campaign: `bitparity run` on one
// shard, writing Dir/result.json (and its journal) and Dir/corpus. The
// caller builds Cmd (its arguments, environment and parent-death signal);
// the Coordinator sends its output to Dir/log, starts it and waits for it.
type Worker struct {
	Shard spec.Shard
	Dir   string
	Cmd   *exec.Cmd
	// Where says where it runs ("CPU", "GPU 3"), for the log.
	Where string

	// Set by Coordinator.Run: why the worker failed (nil when it left a
	// result), its result and how long it ran.
	Err    error
	Result *spec.Result
	Took   time.Duration
}

// Coordinator runs one campaign as several worker processes (run --gpus,
// --procs) and merges what they leave: their results (fuzz.MergeResults)
// and their corpus folders (corpus.Merge into Corpus), together with what
// the workers of an earlier, killed coordinator left in the same work
// folder (Resume).
type Coordinator struct {
	Workers []*Worker
	// Corpus receives the workers' case files; nil: none are merged.
	Corpus corpus.Store
	// Log receives one line per worker started and ended. Nil: io.Discard.
	Log io.Writer
	// Left is what Resume collected (the zero value: nothing).
	Left Leftovers
}

// Outcome is what a coordinated campaign merged.
type Outcome struct {
	// Result is the merged result; nil when no worker left one.
	Result *spec.Result
	// Failed says, one line each, which workers failed and why; Merge the
	// corpus merge's counts (Corpus set).
	Failed []string
	Merge  *corpus.MergeReport
	// Folders is the number of corpus folders merged.
	Folders int
}

// WorkerExits are the exit codes after which a worker's result is its
// campaign's: a verdict (a finding, a stall, an interruption), not a
// failure. The merged result's verdict decides.
var WorkerExits = []int{spec.ExitOK, spec.ExitFinding, spec.ExitStalled, spec.ExitInterrupted}

// Run starts every worker, waits for all, and merges their results and
// corpus folders with the leftovers. A worker that exits other than
// WorkerExits, or leaves no readable result, is in Outcome.Failed; the
// others are still merged. The workers are started and waited for from
// one goroutine locked to its thread: Linux sends a worker its
// parent-death signal when the thread that forked it exits, not only when
// the process does (https://go.dev/issue/27505), and the Go runtime may
// end a thread while the process lives. Every merged folder gets a mark so
// that a later Resume does not merge it again. An error is a failure to
// merge (nothing of Outcome is reliable then).
func (c *Coordinator) Run(ctx context.Context) (*Outcome, error) {
	log := c.Log
	if log == nil {
		log = io.Discard
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	for k, w := range c.Workers {
		f, err := os.Create(filepath.Join(w.Dir, "log"))
		if err != nil {
			return nil, fmt.Errorf("worker log: %w", err)
		}
		defer f.Close()
		w.Cmd.Stdout, w.Cmd.Stderr = f, f
		fmt.Fprintf(log, "worker %d: %s, shard %s, log %s\n", k, w.Where, w.Shard, filepath.Join(w.Dir, "log"))
		if w.Err = w.Cmd.Start(); w.Err != nil {
			w.Err = fmt.Errorf("start: %w", w.Err)
		}
	}
	for _, w := range c.Workers {
		if w.Err == nil {
			w.Err = w.Cmd.Wait()
		}
		w.Took = time.Since(start)
		var ee *exec.ExitError
		if errors.As(w.Err, &ee) && slices.Contains(WorkerExits, ee.ExitCode()) {
			w.Err = nil
		}
		if w.Err == nil {
			w.Result, w.Err = corpus.ReadResult(filepath.Join(w.Dir, "result.json"))
		}
	}
	o := &Outcome{}
	var rs []*spec.Result
	for k, w := range c.Workers {
		if w.Err != nil {
			o.Failed = append(o.Failed, fmt.Sprintf("worker %d (shard %s): %v; log %s", k, w.Shard, w.Err, filepath.Join(w.Dir, "log")))
			fmt.Fprintf(log, "worker %d: FAILED: %v\n", k, w.Err)
			continue
		}
		rs = append(rs, w.Result)
		fmt.Fprintf(log, "worker %d: %d cases, %d finding(s) in %s\n", k, w.Result.Cases, len(w.Result.Findings), w.Took.Round(time.Millisecond))
	}
	rs = append(rs, c.Left.Results...)
	if len(rs) == 0 {
		return o, nil
	}
	res, err := fuzz.MergeResults(rs...)
	if err != nil {
		return nil, err
	}
	res.Duration = spec.Duration(time.Since(start))
	o.Result = res
	if c.Corpus != nil {
		srcs := c.Left.Corpora
		for _, w := range c.Workers {
			if w.Err == nil {
				if d, err := corpus.OpenDir(filepath.Join(w.Dir, "corpus"), false); err == nil {
					srcs = append(srcs, d)
				}
			}
		}
		rep, err := corpus.Merge(c.Corpus, srcs...)
		if err != nil {
			return nil, fmt.Errorf("merge corpus: %w", err)
		}
		if len(rep.Bad) > 0 {
			o.Failed = append(o.Failed, fmt.Sprintf("corpus merge: %v", errors.Join(rep.Bad...)))
		}
		o.Merge, o.Folders = rep, len(srcs)
	}
	c.markMerged()
	return o, nil
}

// mergedMark is the file a coordinator leaves in each worker folder it
// merged into its result and corpus.
const mergedMark = "merged"

// markMerged leaves mergedMark in the folder of every worker whose result
// was merged, and in every resumed folder.
func (c *Coordinator) markMerged() {
	dirs := append([]string(nil), c.Left.Dirs...)
	for _, w := range c.Workers {
		if w.Err == nil {
			dirs = append(dirs, w.Dir)
		}
	}
	for _, d := range dirs {
		os.WriteFile(filepath.Join(d, mergedMark), nil, 0o644)
	}
}

// Leftovers is what the workers of an earlier coordinator with the same
// work folder left behind without being merged (killed, or their parent
// was): their results, rebuilt from their journals when they were killed
// too, and their corpus folders.
type Leftovers struct {
	Results []*spec.Result
	Corpora []corpus.Store
	Dirs    []string
}

// Resume moves every shard-K folder of work to work/previous-STAMP/shard-K,
// so that this coordinator's workers start empty, and collects those no
// coordinator merged (no mark): the worker's result when it records the
// same seed (its Interrupted cleared: this run resumes it), and its corpus
// folder. A folder it cannot read is said on log and skipped.
func Resume(work string, seed uint64, log io.Writer) (Leftovers, error) {
	var left Leftovers
	if log == nil {
		log = io.Discard
	}
	shards, err := filepath.Glob(filepath.Join(work, "shard-*"))
	if err != nil || len(shards) == 0 {
		return left, nil
	}
	sort.Strings(shards)
	prev := filepath.Join(work, "previous-"+time.Now().UTC().Format("20060102T150405.000"))
	if err := os.MkdirAll(prev, 0o755); err != nil {
		return left, fmt.Errorf("--work-dir: %w", err)
	}
	for _, dir := range shards {
		moved := filepath.Join(prev, filepath.Base(dir))
		if err := os.Rename(dir, moved); err != nil {
			return left, fmt.Errorf("--work-dir: move %s aside: %w", dir, err)
		}
		if _, err := os.Stat(filepath.Join(moved, mergedMark)); err == nil {
			continue // its run merged it
		}
		took := false
		if r, err := leftResult(moved); err == nil {
			if r.Seed == seed {
				r.Interrupted = false // this run resumes it: what the worker ran counts, not its stop
				left.Results = append(left.Results, r)
				took = true
			} else {
				fmt.Fprintf(log, "run: %s: a run of seed %d, not %d: its corpus is merged, its counts are not\n", moved, r.Seed, seed)
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(log, "run: %s: %v\n", moved, err)
		}
		if d, err := corpus.OpenDir(filepath.Join(moved, "corpus"), false); err == nil {
			left.Corpora = append(left.Corpora, d)
			took = true
		}
		if took {
			left.Dirs = append(left.Dirs, moved)
		}
	}
	if len(left.Dirs) > 0 {
		fmt.Fprintf(log, "run: resuming what %d interrupted worker(s) left in %s\n", len(left.Dirs), prev)
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

// FailedErr is nil when every worker succeeded, else one error naming each
// failure and the work folder kept.
func (o *Outcome) FailedErr(workers int, work string) error {
	if len(o.Failed) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d worker(s) failed (work folder %s kept):\n  %s", len(o.Failed), workers, work, strings.Join(o.Failed, "\n  "))
}
