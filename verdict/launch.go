package verdict

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
)

// WorkerEnv is set in the environment of every worker process a Launch
// starts: a worker's SIGTERM is its parent's death, however often the
// kernel sends it.
const WorkerEnv = "BITPARITY_SHARD_WORKER"

// Launch is one campaign run as worker processes (bitparity run --gpus,
// --procs): worker k of n runs shard k/n of this process's Shard (with
// Shard i/m: shard i+m*k of m*n) and its spec.Shard.Budget of MaxCases,
// in the folder Work/shard-K, and a Coordinator merges what they leave.
type Launch struct {
	// Exe is the program each worker runs; Args its arguments, given the
	// worker (its Shard and Dir) and its case budget (0: no limit).
	Exe  string
	Args func(w *Worker, maxCases int64) []string
	// Devices are the workers' CUDA_VISIBLE_DEVICES, one worker each
	// (--gpus, ParseGPUs); without them Procs CPU workers run.
	Devices []string
	Procs   int
	// Shard is this process's part of the case stream (the zero value:
	// all of it); MaxCases its case budget (0: none).
	Shard    spec.Shard
	MaxCases int64
	// Seed is the campaign's: Resume merges only leftovers of the same.
	Seed uint64
	// Work keeps each worker's folder; empty: a temporary folder, removed
	// when every worker succeeded.
	Work string
	// Corpus receives the workers' case files (nil: none are merged).
	Corpus corpus.Store
	// Log receives a line per worker started, ended or not started.
	Log io.Writer
}

// Run starts the workers, waits for all (Coordinator.Run, with what the
// workers of a killed earlier run left in Work: Resume) and returns the
// merged outcome. Each worker gets WorkerEnv, a GOMAXPROCS of an equal
// share of the host's CPUs (unless the environment sets one), its GPU
// alone with Devices, and the parent-death signal. A worker that fails is
// an error naming it, returned with the outcome of the others; the work
// folder is then kept.
func (l *Launch) Run(ctx context.Context) (*Outcome, error) {
	work, temp := l.Work, false
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "bitparity-run-"); err != nil {
			return nil, fmt.Errorf("work folder: %w", err)
		}
		temp = true
	}
	co := &Coordinator{Log: l.Log, Corpus: l.Corpus}
	var err error
	if co.Left, err = Resume(work, l.Seed, l.Log); err != nil {
		return nil, err
	}
	if co.Workers, err = l.workers(ctx, work); err != nil {
		return nil, err
	}
	o, err := co.Run(ctx)
	if err != nil {
		return nil, err
	}
	if err := o.FailedErr(len(co.Workers), work); err != nil {
		return o, err
	}
	if temp {
		os.RemoveAll(work)
	}
	return o, nil
}

// workers makes the workers' commands, skipping one whose shard has no
// case of the budget.
func (l *Launch) workers(ctx context.Context, work string) ([]*Worker, error) {
	n := l.Procs
	if len(l.Devices) > 0 {
		n = len(l.Devices)
	}
	host := l.Shard
	if host.Count < 1 {
		host = spec.Shard{Index: 0, Count: 1}
	}
	log := l.Log
	if log == nil {
		log = io.Discard
	}
	var out []*Worker
	for k := 0; k < n; k++ {
		w := &Worker{Shard: spec.Shard{Index: host.Index + host.Count*k, Count: host.Count * n},
			Dir: filepath.Join(work, fmt.Sprintf("shard-%d", k)), Where: "CPU"}
		budget := spec.Shard{Index: k, Count: n}.Budget(l.MaxCases)
		if l.MaxCases > 0 && budget == 0 {
			fmt.Fprintf(log, "worker %d: shard %s has no case of the %d-case budget: not started\n", k, w.Shard, l.MaxCases)
			continue
		}
		if err := os.MkdirAll(w.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("work folder: %w", err)
		}
		cmd := exec.CommandContext(ctx, l.Exe, l.Args(w, budget)...)
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 30 * time.Second
		dieWithParent(cmd)
		cmd.Env = append(os.Environ(), WorkerEnv+"=1")
		if os.Getenv("GOMAXPROCS") == "" {
			cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(WorkerProcs(n)))
		}
		if len(l.Devices) > 0 {
			cmd.Env = append(cmd.Env, "CUDA_VISIBLE_DEVICES="+l.Devices[k])
			w.Where = "GPU " + l.Devices[k]
		}
		w.Cmd = cmd
		out = append(out, w)
	}
	return out, nil
}

// WorkerProcs is each of n workers' GOMAXPROCS: an equal share of the
// host's CPUs, at least 1, so n workers together run about as many
// goroutines as one process would.
func WorkerProcs(n int) int { return max(1, runtime.NumCPU()/max(1, n)) }

// RunArgs are a worker's arguments for `bitparity run`: every flag of fs
// the user set, as --NAME=VALUE, except --gpus, --procs, --shard,
// --corpus, --work-dir, --json and --max-cases; then --shard w.Shard,
// --json w.Dir/result.json, --max-cases maxCases when it is above 0 and
// --corpus w.Dir/corpus when withCorpus.
func RunArgs(fs *flag.FlagSet, w *Worker, maxCases int64, withCorpus bool) []string {
	args := []string{"run"}
	skip := map[string]bool{"gpus": true, "procs": true, "shard": true, "corpus": true, "work-dir": true, "json": true, "max-cases": true}
	fs.Visit(func(f *flag.Flag) {
		if !skip[f.Name] {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	args = append(args, "--shard", w.Shard.String(), "--json", filepath.Join(w.Dir, "result.json"))
	if maxCases > 0 {
		args = append(args, "--max-cases", strconv.FormatInt(maxCases, 10))
	}
	if withCorpus {
		args = append(args, "--corpus", filepath.Join(w.Dir, "corpus"))
	}
	return args
}
