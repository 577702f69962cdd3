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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
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
	shard                         fuzz.Shard
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
	s, err := fuzz.ParseShard(p.shardS)
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

// parseGPUs turns --gpus into CUDA_VISIBLE_DEVICES values, one per worker:
// "all" is every one of count GPUs, "N" the first N, "i,j,..." those ids
// (a trailing comma makes a list of one). Ids are ordinals of the GPUs this
// process sees; when visible (the parent's CUDA_VISIBLE_DEVICES) is set,
// ordinal i maps to its i-th entry, so a worker sees the GPU its parent
// called i.
func parseGPUs(s string, count int, visible string) ([]string, error) {
	var ords []int
	switch {
	case s == "all":
		for i := 0; i < count; i++ {
			ords = append(ords, i)
		}
	case !strings.Contains(s, ","):
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--gpus %q: want all, a count N >= 1 or a list of ids such as 0,2,3", s)
		}
		if n > count {
			return nil, fmt.Errorf("--gpus %d: only %d GPU(s) visible", n, count)
		}
		for i := 0; i < n; i++ {
			ords = append(ords, i)
		}
	default:
		seen := map[int]bool{}
		for _, f := range strings.Split(strings.TrimSuffix(s, ","), ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 {
				return nil, fmt.Errorf("--gpus %q: %q is not a GPU id", s, f)
			}
			if i >= count {
				return nil, fmt.Errorf("--gpus %q: GPU %d requested, %d visible (ids 0..%d)", s, i, count, count-1)
			}
			if seen[i] {
				return nil, fmt.Errorf("--gpus %q: GPU %d named twice", s, i)
			}
			seen[i] = true
			ords = append(ords, i)
		}
	}
	if len(ords) == 0 {
		return nil, fmt.Errorf("--gpus %q: no GPU visible", s)
	}
	var vis []string
	if strings.TrimSpace(visible) != "" {
		vis = strings.Split(visible, ",")
	}
	out := make([]string, len(ords))
	for k, i := range ords {
		out[k] = strconv.Itoa(i)
		if i < len(vis) {
			out[k] = strings.TrimSpace(vis[i])
		}
	}
	return out, nil
}

// workerProcs is each of n workers' GOMAXPROCS: an equal share of the
// host's CPUs, at least 1, so n workers together run about as many
// goroutines as one process would (a GOMAXPROCS in the parent's
// environment is passed on instead).
func workerProcs(n int) int { return max(1, runtime.NumCPU()/max(1, n)) }

// workerExe is the program a worker runs (a test replaces it).
var workerExe = os.Executable

// worker is one child process of a parallel run.
type worker struct {
	shard fuzz.Shard
	gpu   string // CUDA_VISIBLE_DEVICES, "" for a CPU worker
	dir   string
	cmd   *exec.Cmd
	err   error
	res   *spec.Result
	took  time.Duration
}

// childArgs are a worker's arguments: run with every flag the user set,
// except the parallel ones, --json and --max-cases, which it gets per
// worker.
func childArgs(fs *flag.FlagSet, w *worker, maxCases int64, withCorpus bool) []string {
	args := []string{"run"}
	skip := map[string]bool{"gpus": true, "procs": true, "shard": true, "corpus": true, "work-dir": true, "json": true, "max-cases": true}
	fs.Visit(func(f *flag.Flag) {
		if !skip[f.Name] {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	args = append(args, "--shard", w.shard.String(), "--json", filepath.Join(w.dir, "result.json"))
	if maxCases > 0 {
		args = append(args, "--max-cases", strconv.FormatInt(maxCases, 10))
	}
	if withCorpus {
		args = append(args, "--corpus", filepath.Join(w.dir, "corpus"))
	}
	return args
}

// run is `bitparity run --gpus|--procs`: it starts one worker per GPU (or
// per --procs), worker k running shard k/n of this process's shard (with
// --shard i/m: shard i+m*k of m*n) and MaxCases' share of it
// (fuzz.Shard.Budget), waits for all, merges their results
// (fuzz.MergeResults: findings deduplicated by signature, the earliest
// kept, cases summed) and corpus folders (corpus.Merge into --corpus:
// content-hash names, atomic writes), and returns the merged result. A worker that exits other
// than 0 or 1, or leaves no result, is an error; the others are still
// merged and the work folder is kept.
func (p *parallelFlags) run(ctx context.Context, stdout, stderr io.Writer, fs *flag.FlagSet, maxCases int64) (*spec.Result, error) {
	var ids []string
	if p.gpus != "" {
		n, err := gpu.DeviceCount()
		if err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("run --gpus: %w (for CPU worker processes use --procs N)", err))
		}
		if ids, err = parseGPUs(p.gpus, n, os.Getenv("CUDA_VISIBLE_DEVICES")); err != nil {
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
	left, err := resumeLeftovers(work, fs.Lookup("seed").Value.(flag.Getter).Get().(uint64), stderr)
	if err != nil {
		return nil, withCode(spec.ExitInternal, err)
	}
	n := len(ids)
	host := p.shard
	if host.Count < 1 {
		host = fuzz.Shard{Index: 0, Count: 1}
	}
	var ws []*worker
	for k, id := range ids {
		w := &worker{shard: fuzz.Shard{Index: host.Index + host.Count*k, Count: host.Count * n}, gpu: id,
			dir: filepath.Join(work, fmt.Sprintf("shard-%d", k))}
		budget := fuzz.Shard{Index: k, Count: n}.Budget(maxCases)
		if maxCases > 0 && budget == 0 {
			fmt.Fprintf(stderr, "worker %d: shard %s has no case of the %d-case budget: not started\n", k, w.shard, maxCases)
			continue
		}
		if err := os.MkdirAll(w.dir, 0o755); err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("run: work folder: %w", err))
		}
		w.cmd = exec.CommandContext(ctx, exe, childArgs(fs, w, budget, p.corpus != "")...)
		w.cmd.Cancel = func() error { return w.cmd.Process.Signal(os.Interrupt) }
		w.cmd.WaitDelay = 30 * time.Second
		dieWithParent(w.cmd)
		w.cmd.Env = append(os.Environ(), shardWorkerEnv+"=1")
		if os.Getenv("GOMAXPROCS") == "" {
			w.cmd.Env = append(w.cmd.Env, "GOMAXPROCS="+strconv.Itoa(workerProcs(n)))
		}
		where := "CPU"
		if p.gpus != "" {
			w.cmd.Env = append(w.cmd.Env, "CUDA_VISIBLE_DEVICES="+id)
			where = "GPU " + id
		}
		ws = append(ws, w)
		fmt.Fprintf(stderr, "worker %d: %s, shard %s, log %s\n", k, where, w.shard, filepath.Join(w.dir, "log"))
	}
	// Linux sends a worker its parent-death signal when the thread that
	// forked it exits, not only when the process does
	// (https://go.dev/issue/27505), and the Go runtime may end a thread
	// while the process lives: a worker would get an early SIGTERM, stop,
	// and then die on the second one when the parent really goes (seen on
	// the H200 host). So the workers are started and waited for from this
	// goroutine, locked to its thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	for _, w := range ws {
		log, err := os.Create(filepath.Join(w.dir, "log"))
		if err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("run: worker log: %w", err))
		}
		defer log.Close()
		w.cmd.Stdout, w.cmd.Stderr = log, log
		if w.err = w.cmd.Start(); w.err != nil {
			w.err = fmt.Errorf("start: %w", w.err)
		}
	}
	for _, w := range ws {
		if w.err == nil {
			w.err = w.cmd.Wait()
		}
		w.took = time.Since(start)
		var ee *exec.ExitError
		if errors.As(w.err, &ee) && slices.Contains([]int{spec.ExitFinding, spec.ExitStalled, spec.ExitInterrupted}, ee.ExitCode()) {
			w.err = nil // the worker's verdict; the merged result's verdict decides (an interrupted worker's result says so)
		}
		if w.err == nil {
			w.res, w.err = corpus.ReadResult(filepath.Join(w.dir, "result.json"))
		}
	}
	var rs []*spec.Result
	var failed []string
	for k, w := range ws {
		if w.err != nil {
			failed = append(failed, fmt.Sprintf("worker %d (shard %s): %v; log %s", k, w.shard, w.err, filepath.Join(w.dir, "log")))
			fmt.Fprintf(stderr, "worker %d: FAILED: %v\n", k, w.err)
			continue
		}
		rs = append(rs, w.res)
		fmt.Fprintf(stderr, "worker %d: %d cases, %d finding(s) in %s\n", k, w.res.Cases, len(w.res.Findings), w.took.Round(time.Millisecond))
	}
	rs = append(rs, left.results...)
	var res *spec.Result
	if len(rs) > 0 {
		if res, err = fuzz.MergeResults(rs...); err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("run: %w", err))
		}
		res.Duration = spec.Duration(time.Since(start))
	}
	if p.corpus != "" && len(rs) > 0 {
		dst, err := corpus.Open(ctx, p.corpus, true)
		if err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("run: corpus: %w", err))
		}
		srcs := left.corpora
		for _, w := range ws {
			if w.err == nil {
				if d, err := corpus.OpenDir(filepath.Join(w.dir, "corpus"), false); err == nil {
					srcs = append(srcs, d)
				}
			}
		}
		rep, err := corpus.Merge(dst, srcs...)
		if err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("run: merge corpus: %w", err))
		}
		if len(rep.Bad) > 0 {
			failed = append(failed, fmt.Sprintf("corpus merge: %v", errors.Join(rep.Bad...)))
		}
		fmt.Fprintf(stdout, "corpus %s: %d case file(s) added from %d worker folder(s), %d already there\n", p.corpus, len(rep.Added), len(srcs), len(rep.Existing))
	}
	markMerged(ws, left)
	if len(failed) > 0 {
		err := withCode(spec.ExitInternal, fmt.Errorf("run: %d of %d worker(s) failed (work folder %s kept):\n  %s", len(failed), len(ws), work, strings.Join(failed, "\n  ")))
		return res, err
	}
	if temp {
		os.RemoveAll(work)
	}
	return res, nil
}
