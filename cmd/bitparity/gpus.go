package main

import (
	"context"
	"errors"
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
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

// shardWorkerEnv is set in the environment of the worker processes of
// --procs and --gpus: their SIGTERM is their parent's death, however often
// the kernel sends it (stopOnSignal).
const shardWorkerEnv = "BITPARITY_SHARD_WORKER"

// parallelFlags are run's flags for one campaign over several processes:
// --gpus (one worker per GPU), --procs (CPU worker processes), --shard
// (this process's part of the case stream), --corpus and --work-dir.
type parallelFlags struct {
	gpus, shardS, corpus, workDir string
	procs                         int
	shard                         spec.Shard
}

// runParallelFlags defines the flags on fs.
func runParallelFlags(fs *flag.FlagSet) *parallelFlags {
	p := &parallelFlags{}
	fs.StringVar(&p.gpus, "gpus", "", "run one worker process per GPU: `all`, a count N (GPUs 0..N-1) or a list of ids such as 0,2,3 (one id: 3,); each worker sees its GPU alone (CUDA_VISIBLE_DEVICES) and runs shard k/n; the parent merges findings and corpus")
	fs.IntVar(&p.procs, "procs", 0, "run `N` CPU worker processes sharded like --gpus (CPU-only hosts and tests)")
	fs.StringVar(&p.shardS, "shard", "", "run only shard `i/n` of the case stream: draw k of each pair belongs to shard k mod n (the union of shards 0/n..n-1/n is the unsharded campaign; --max-cases then counts this shard's cases; with --gpus or --procs each worker takes a part of this shard)")
	fs.StringVar(&p.corpus, "corpus", "", "store every finding as a case file in the corpus folder `DIR` (created if needed) or bucket URL (s3://, gs://, azblob://, file://; put-if-absent; with --gpus or --procs the workers' folders are merged into it)")
	fs.StringVar(&p.workDir, "work-dir", "", "with --gpus or --procs: keep each worker's result, corpus and logs under `DIR`/shard-K (default: a temporary folder, removed when every worker succeeded)")
	return p
}

// parallel reports whether the run starts worker processes.
func (p *parallelFlags) parallel() bool { return p.gpus != "" || p.procs > 0 }

// apply checks the flags and sets the campaign's shard.
func (p *parallelFlags) apply(c *fuzz.Campaign) error {
	s, err := spec.ParseShard(p.shardS)
	if err != nil {
		return usageErr("run: --%v", err)
	}
	p.shard = s
	c.Shard = s
	switch {
	case p.gpus != "" && p.procs != 0:
		return usageErr("run: --gpus and --procs exclude each other")
	case p.procs < 0:
		return usageErr("run: --procs %d: want a count of processes", p.procs)
	case p.workDir != "" && !p.parallel():
		return usageErr("run: --work-dir needs --gpus or --procs")
	case p.parallel() && runCountPairs(c) == 0:
		return usageErr("run: %v", fuzz.ErrNoPairs)
	}
	if err := checkBucket(p.corpus); err != nil { // before the campaign, not after it
		return usageErr("run: --corpus: %v", err)
	}
	return nil
}

// after runs in every campaign process once the result is written: it
// stores in --corpus the findings the recorder did not (created lists the
// case files it stored) and says how many case files this run added.
func (p *parallelFlags) after(stdout io.Writer, res *spec.Result, created []string) error {
	if p.corpus != "" && !p.parallel() { // a parallel run merged its workers' folders
		d, err := corpus.Open(context.Background(), p.corpus, true)
		if err != nil {
			return fmt.Errorf("run: corpus: %w", err)
		}
		added, existing, errs := corpus.ImportResult(d, res)
		if len(errs) > 0 {
			return fmt.Errorf("run: corpus %s: %w", p.corpus, errors.Join(errs...))
		}
		ours := map[string]bool{}
		for _, name := range created {
			ours[name] = true
		}
		n, there := len(added), 0
		for _, name := range existing {
			if ours[name] {
				n++ // stored by this run as it was found
			} else {
				there++
			}
		}
		fmt.Fprintf(stdout, "corpus %s: %d case file(s) added, %d already there\n", p.corpus, n, there)
	}
	return nil
}

// workerProcs is each of n workers' GOMAXPROCS: an equal share of the
// host's CPUs, at least 1, so n workers together run about as many
// goroutines as one process would (a GOMAXPROCS in the parent's
// environment is passed on instead).
func workerProcs(n int) int { return max(1, runtime.NumCPU()/max(1, n)) }

// workerExe is the program a worker runs (a test replaces it).
var workerExe = os.Executable

// childArgs are a worker's arguments: run with every flag the user set,
// except the parallel ones, --json and --max-cases, which it gets per
// worker.
func childArgs(fs *flag.FlagSet, w *verdict.Worker, maxCases int64, withCorpus bool) []string {
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

// run is `bitparity run --gpus|--procs`: it starts one worker per GPU (or
// per --procs), worker k running shard k/n of this process's shard (with
// --shard i/m: shard i+m*k of m*n) and MaxCases' share of it
// (spec.Shard.Budget), and hands them to verdict.Coordinator, which waits
// for all and merges their results (findings deduplicated by signature,
// the earliest kept, cases summed) and corpus folders into --corpus, with
// what the workers of a killed earlier run left in --work-dir
// (verdict.Resume). A worker that fails, or leaves no result, is an error;
// the others are still merged and the work folder is kept.
func (p *parallelFlags) run(ctx context.Context, stdout, stderr io.Writer, fs *flag.FlagSet, maxCases int64) (*spec.Result, error) {
	var ids []string
	if p.gpus != "" {
		n, err := gpu.DeviceCount()
		if err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("run --gpus: %w (for CPU worker processes use --procs N)", err))
		}
		if ids, err = verdict.ParseGPUs(p.gpus, n, os.Getenv("CUDA_VISIBLE_DEVICES")); err != nil {
			return nil, usageErr("run: %v", err)
		}
	} else {
		ids = make([]string, p.procs)
	}
	exe, err := workerExe()
	if err != nil {
		return nil, withCode(spec.ExitInternal, fmt.Errorf("run: find own executable: %w", err))
	}
	work, temp := p.workDir, false
	if work == "" {
		if work, err = os.MkdirTemp("", "bitparity-run-"); err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("run: work folder: %w", err))
		}
		temp = true
	}
	co := &verdict.Coordinator{Log: stderr}
	if co.Left, err = verdict.Resume(work, fs.Lookup("seed").Value.(flag.Getter).Get().(uint64), stderr); err != nil {
		return nil, withCode(spec.ExitInternal, fmt.Errorf("run: %w", err))
	}
	n := len(ids)
	host := p.shard
	if host.Count < 1 {
		host = spec.Shard{Index: 0, Count: 1}
	}
	for k, id := range ids {
		w := &verdict.Worker{Shard: spec.Shard{Index: host.Index + host.Count*k, Count: host.Count * n},
			Dir: filepath.Join(work, fmt.Sprintf("shard-%d", k)), Where: "CPU"}
		budget := spec.Shard{Index: k, Count: n}.Budget(maxCases)
		if maxCases > 0 && budget == 0 {
			fmt.Fprintf(stderr, "worker %d: shard %s has no case of the %d-case budget: not started\n", k, w.Shard, maxCases)
			continue
		}
		if err := os.MkdirAll(w.Dir, 0o755); err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("run: work folder: %w", err))
		}
		cmd := exec.CommandContext(ctx, exe, childArgs(fs, w, budget, p.corpus != "")...)
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 30 * time.Second
		dieWithParent(cmd)
		cmd.Env = append(os.Environ(), shardWorkerEnv+"=1")
		if os.Getenv("GOMAXPROCS") == "" {
			cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(workerProcs(n)))
		}
		if p.gpus != "" {
			cmd.Env = append(cmd.Env, "CUDA_VISIBLE_DEVICES="+id)
			w.Where = "GPU " + id
		}
		w.Cmd = cmd
		co.Workers = append(co.Workers, w)
	}
	if p.corpus != "" {
		if co.Corpus, err = corpus.Open(ctx, p.corpus, true); err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("run: corpus: %w", err))
		}
	}
	o, err := co.Run(ctx)
	if err != nil {
		return nil, withCode(spec.ExitInternal, fmt.Errorf("run: %w", err))
	}
	if p.corpus != "" && o.Result != nil {
		fmt.Fprintf(stdout, "corpus %s: %d case file(s) added from %d worker folder(s), %d already there\n", p.corpus, len(o.Merge.Added), o.Folders, len(o.Merge.Existing))
	}
	if err := o.FailedErr(len(co.Workers), work); err != nil {
		return o.Result, withCode(spec.ExitInternal, fmt.Errorf("run: %w", err))
	}
	if temp {
		os.RemoveAll(work)
	}
	return o.Result, nil
}
