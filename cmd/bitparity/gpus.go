package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

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
	case p.parallel() && c.CountPairs() == 0:
		return usageErr("run: %v", fuzz.ErrNoPairs)
	}
	if err := checkBucket(p.corpus); err != nil { // before the campaign, not after it
		return usageErr("run: --corpus: %v", err)
	}
	return nil
}

// after says how many case files the run added to --corpus, storing the
// findings its recorder did not (verdict.Recorder.Keep); a parallel run
// merged its workers' folders and said so.
func (p *parallelFlags) after(stdout io.Writer, rec *verdict.Recorder, res *spec.Result) error {
	if p.corpus == "" || p.parallel() {
		return nil
	}
	added, there, err := rec.Keep(res)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	fmt.Fprintf(stdout, "corpus %s: %d case file(s) added, %d already there\n", p.corpus, added, there)
	return nil
}

// run is `bitparity run --gpus|--procs`: it resolves the GPUs and hands
// the campaign to verdict.Launch (one worker process per GPU or --procs,
// each on its shard, merged by verdict.Coordinator into one result and
// --corpus). A worker that fails is an error; the others are still merged
// and the work folder is kept.
func (p *parallelFlags) run(ctx context.Context, stdout, stderr io.Writer, fs *flag.FlagSet, maxCases int64) (*spec.Result, error) {
	l := &verdict.Launch{Procs: p.procs, Shard: p.shard, MaxCases: maxCases, Work: p.workDir, Log: stderr,
		Seed: fs.Lookup("seed").Value.(flag.Getter).Get().(uint64),
		Args: func(w *verdict.Worker, budget int64) []string { return verdict.RunArgs(fs, w, budget, p.corpus != "") }}
	if p.gpus != "" {
		n, err := gpu.DeviceCount()
		if err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("run --gpus: %w (for CPU worker processes use --procs N)", err))
		}
		if l.Devices, err = verdict.ParseGPUs(p.gpus, n, os.Getenv("CUDA_VISIBLE_DEVICES")); err != nil {
			return nil, usageErr("run: %v", err)
		}
	}
	var err error
	if l.Exe, err = os.Executable(); err != nil {
		return nil, withCode(spec.ExitInternal, fmt.Errorf("run: find own executable: %w", err))
	}
	if p.corpus != "" {
		if l.Corpus, err = corpus.Open(ctx, p.corpus, true); err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("run: corpus: %w", err))
		}
	}
	o, err := l.Run(ctx)
	if o != nil && p.corpus != "" && o.Result != nil {
		fmt.Fprintf(stdout, "corpus %s: %d case file(s) added from %d worker folder(s), %d already there\n", p.corpus, len(o.Merge.Added), o.Folders, len(o.Merge.Existing))
	}
	if err != nil {
		var res *spec.Result
		if o != nil {
			res = o.Result
		}
		return res, withCode(spec.ExitInternal, fmt.Errorf("run: %w", err))
	}
	return o.Result, nil
}
