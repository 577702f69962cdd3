package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/internal/lifecycle"
	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/verdict"
)

// runCmd is `bitparity run`. Exit codes: 0 when nothing unexpected was
// found (with --expect-controls, the default, findings on drift models are
// the expected negative controls, and every control in the run must have
// been found); 1 when a finding is unexpected, or a control was missed
// after its --control-cases; 2 for bad flags or a bad case; 3 for internal
// failures; 5 when the run stalled (a control that ran out of time among
// them); 6 when a signal interrupted it.
func runCmd(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("run", stderr, "usage: bitparity run [flags]")
	f := newRunFlags(fs)
	if ok, err := parse(fs, args); !ok {
		return err
	}
	r := &runState{runFlags: f, fs: fs, args: args, stdout: stdout, stderr: stderr}
	if err := r.check(); err != nil {
		return err
	}
	stopProfiles, err := lifecycle.Profiles(*f.cpuProfile, *f.mutexProfile, stderr)
	if err != nil {
		return usageErr("run: %v", err)
	}
	defer stopProfiles()
	lifecycle.TuneGC()
	ctx, stop := lifecycle.StopOnSignal(stderr, os.Getenv(verdict.WorkerEnv) != "")
	defer stop()
	workerNames, werr := f.wk.start(stderr)
	defer external.CloseAllWithin(stderr) // the workers, and every other process target
	if werr != nil {
		return werr
	}
	execNames, eerr := f.ex.start(ctx, "run")
	if eerr != nil {
		return eerr
	}
	if models, others := external.SplitModels(execNames); len(models) > 0 && *f.caseJSON == "" {
		if len(others) > 0 || len(workerNames) > 0 || *f.targets != "" || f.par.parallel() {
			return usageErr("run: a model route (%v) runs alone: no other --exec, --kernel, --targets, --procs or --gpus", models)
		}
		return r.routes(ctx, models)
	}
	if *f.caseJSON != "" {
		return runOneCase(ctx, stdout, *f.caseJSON, *f.jsonPath, *f.explain, execNames)
	}
	r.procs, r.execNames = append(workerNames, execNames...), execNames
	return r.campaign(ctx)
}

// runFlags are bitparity run's flags.
type runFlags struct {
	dur                                      *time.Duration
	seed                                     *uint64
	targets, rels, jsonPath, caseJSON, e2eOn *string
	knownDirs, cpuProfile, mutexProfile      *string
	maxCases, minCases, controlCases         *int64
	workers, gpuStreams                      *int
	noShrink, taps, explain, expect          *bool
	par                                      *parallelFlags
	wk                                       *workerFlags
	ex                                       *execFlags
	prof                                     profileFlag
}

// newRunFlags defines run's flags on fs.
func newRunFlags(fs *flag.FlagSet) *runFlags {
	f := &runFlags{}
	f.dur = fs.Duration("duration", 60*time.Second, "how long to generate cases (shrinking the last finding may add a few seconds)")
	f.seed = fs.Uint64("seed", 1, "campaign seed: the same seed draws the same cases per pair")
	f.targets = fs.String("targets", "", "comma-separated targets to run (default: all; see bitparity list)")
	f.rels = fs.String("relations", "", "comma-separated relations to run (default: all)")
	f.jsonPath = fs.String("json", "", "write the versioned result (spec.Result) to this file, atomically")
	f.caseJSON = fs.String("case", "", "run one case given as JSON (as printed by a repro line) instead of a campaign")
	f.maxCases = fs.Int64("max-cases", 0, "stop after this many cases (0: no limit)")
	f.workers = fs.Int("workers", 0, "cases run at once (0: one per CPU, GOMAXPROCS; 1 for one case at a time)")
	f.gpuStreams = fs.Int("gpu-streams", gpu.DefaultStreams, fmt.Sprintf("streams of each GPU the workers' checks are spread over (worker i on stream i mod `N`, 1 to %d): each stream submits its launches and copies apart from the others; 1 runs every check on the default stream", gpu.MaxStreams))
	f.noShrink = fs.Bool("no-shrink", false, "report findings as first found, without shrinking or drift maps")
	f.taps = fs.Bool("taps", true, "also compare fp32 intermediates (taps) when the outputs are equal; false: outputs only")
	f.e2eOn = fs.String("transformer-on", transformer.DefaultOn(), "backends of the end-to-end transformer's train and inference paths: TRAIN,INFER or one name for both (cpu; cuda in a cuda build)")
	f.knownDirs = fs.String("known", "", "comma-separated case folders or bucket URLs of known, still-open findings (a team's corpus): a finding that is the same drift as an open case there (the same kind, op, relation and targets, in any dtype or seed, and a drift map that splits the swept values alike, or without maps the same minimal shape: docs/trust.md) is listed as known and does not fail the run; one that is the same drift as a case marked fixed is a regression")
	f.explain = fs.Bool("explain", false, "infer the schedule behind each class of every finding's drift map (bitparity explain) and report it with the finding")
	f.minCases = fs.Int64("min-cases", 0, "the run is STALLED (exit 5) when a target ran fewer than `N` cases or stopped answering; 0: one case for --exec and --kernel targets, no minimum for the others")
	f.expect = fs.Bool("expect-controls", true, "treat findings on drift models (negative controls) as expected: exit 0 when every control was found and nothing else was")
	f.controlCases = fs.Int64("control-cases", verdict.DefaultControlCases, "the cases per relation a negative control is given: one not found in fewer (a busy machine) ran out of time, and the run is STALLED (exit 5), not NOT FOUND; 0, or a run bounded by --max-cases: every control not found is NOT FOUND")
	f.par = runParallelFlags(fs) // --gpus --procs --shard --corpus --work-dir (gpus.go)
	f.wk = runWorkerFlags(fs)    // --kernel --isolate (kernel.go)
	f.ex = runExecFlags(fs)      // --exec (exec.go)

	f.prof = addRunProfileFlags(fs) // --profile, --shrink-past-profile (profile.go)
	f.cpuProfile = fs.String("cpuprofile", "", "write a CPU profile of the whole run (runtime/pprof; read it with go tool pprof) to `FILE`")
	f.mutexProfile = fs.String("mutexprofile", "", "write the run's lock contention profile (runtime/pprof \"mutex\", every contention event) to `FILE`")
	return f
}

// runState is one bitparity run: its flags, what they resolved to and
// where it prints.
type runState struct {
	*runFlags
	fs               *flag.FlagSet
	args             []string
	stdout, stderr   io.Writer
	trainOn, inferOn string
	known            *verdict.Known
	procs, execNames []string // the --kernel and --exec targets; the --exec ones
}

// check reads and refuses run's flags before any work.
func (r *runState) check() error {
	var err error
	if r.trainOn, r.inferOn, err = transformer.ParseOn(*r.e2eOn); err != nil {
		return usageErr("run: --transformer-on: %v", err)
	}
	if r.known, err = verdict.LoadKnown(context.Background(), runSplitList(*r.knownDirs), r.stderr); err != nil {
		return usageErr("run: %v", err)
	}
	if r.fs.NArg() > 0 {
		return usageErr("run: unexpected arguments %q", r.fs.Args())
	}
	if err := runCheckFlags(r.fs); err != nil {
		return err
	}
	if err := checkOutputFile("json", *r.jsonPath); err != nil {
		return err
	}
	if err := gpu.SetStreams(*r.gpuStreams); err != nil {
		return usageErr("run: --gpu-streams: %v", err)
	}
	return checkOutputDir("corpus", r.par.corpus)
}

// newCampaign is the campaign the flags ask for, its targets and relations
// checked.
func (r *runState) newCampaign() (*fuzz.Campaign, error) {
	c := &fuzz.Campaign{
		Duration:  *r.dur,
		Seed:      *r.seed,
		Targets:   append(runSplitList(*r.targets), r.procs...),
		Relations: runSplitList(*r.rels),
		MaxCases:  *r.maxCases,
		Workers:   *r.workers,
		NoShrink:  *r.noShrink,
		NoTaps:    !*r.taps,
	}
	if err := r.prof.apply(c); err != nil {
		return nil, err
	}
	c.ProgressEvery = 200 * time.Millisecond
	c.Sources = scan.OpSources(c.Targets) // targets of op packages (docs/moe.md)
	for _, name := range c.Targets {
		if _, err := target.Lookup(name); err != nil && !scan.IsOpTarget(name) {
			return nil, usageErr("run: %v", err)
		}
	}
	for _, name := range c.Relations {
		if _, err := relate.ByName(name); err != nil {
			return nil, usageErr("run: %v", err)
		}
	}
	if err := r.par.apply(c); err != nil {
		return nil, err
	}
	return c, nil
}

// head is the result's header: when it started, the seed, this host's
// environment and the command line.
func (r *runState) head() spec.Result {
	return spec.Result{Version: spec.ResultVersion, Started: time.Now().UTC(), Seed: *r.seed, Env: gpu.HereEnv(),
		Args: append([]string{"run"}, r.args...)}
}

// recorder opens the recorder of the run's findings (verdict.Recorder:
// each finding in --corpus and in --json's journal as it is found,
// replaced by its shrunk form), logging on stderr.
func (r *runState) recorder(head spec.Result) (*verdict.Recorder, error) {
	opts := verdict.RecorderOptions{JSON: *r.jsonPath, Head: head, Log: r.stderr, Source: "campaign"}
	rec, err := verdict.OpenRecorder(context.Background(), r.par.corpus, opts)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return rec, nil
}

// campaign is one verdict.Run of the campaign the flags ask for: in a full
// campaign (every target and relation, in this process) the end-to-end
// transformer's jobs run in their time share beside the single-op pairs
// (transformer.SharedSource); the pairs run here or in --gpus/--procs
// workers. It records, judges (verdict.Run.Judge) and prints the result.
func (r *runState) campaign(ctx context.Context) error {
	c, err := r.newCampaign()
	if err != nil {
		return err
	}
	prog := reports.NewProgress(r.stderr, *r.dur)
	head := r.head()
	c.Env = head.Env // the findings record the whole fingerprint, the GPU's too
	rec, err := r.recorder(head)
	if err != nil {
		return usageErr("%v", err)
	}
	fmt.Fprintf(r.stdout, "bitparity run: seed %d, %s, %d pairs of target and relation%s\n", *r.seed, *r.dur, c.CountPairs(), scan.SourcesWords(c.Sources))
	run := &verdict.Run{Recorder: rec, Campaign: c, Progress: prog.Update}
	if *r.targets == "" && *r.rels == "" && len(r.procs) == 0 && !r.par.parallel() {
		run.Shares = []*fuzz.Source{transformer.SharedSource(*r.dur, r.trainOn, r.inferOn)}
	}
	if r.par.parallel() {
		run.Elsewhere = func(ctx context.Context) (*spec.Result, error) {
			return r.par.run(ctx, r.stdout, r.stderr, r.fs, *r.maxCases)
		}
	}
	res, err := run.Start(ctx)
	prog.Finish()
	switch {
	case res != nil:
		return r.finish(ctx, rec, run, res, err)
	case errors.Is(err, fuzz.ErrNoPairs):
		return usageErr("run: %v", err)
	case r.par.parallel():
		return err
	}
	return withCode(spec.ExitInternal, fmt.Errorf("run: %w", err))
}

// finish records the result, judges it (verdict.Run.Judge) and prints
// it; runErr is the campaign's own error.
func (r *runState) finish(ctx context.Context, rec *verdict.Recorder, run *verdict.Run, res *spec.Result, runErr error) error {
	for _, s := range run.Shared {
		if r.trainOn != transformer.CPU || r.inferOn != transformer.CPU {
			fmt.Fprintf(r.stdout, "transformer: train path on %s, inference path on %s\n", r.trainOn, r.inferOn)
		}
		s.Text(r.stdout)
	}
	res.Stalls = append(res.Stalls, external.StallsWithin()...)
	stalls := verdict.Stalls(res, *r.minCases, r.procs)
	res.Args = append([]string{"run"}, r.args...)
	if *r.explain {
		explainAll(ctx, r.stderr, res.Findings)
	}
	external.RecordAdapters(res, r.execNames)
	if werr := rec.Finish(res); werr != nil {
		return withCode(spec.ExitInternal, fmt.Errorf("run: %w", werr))
	}
	if werr := r.par.after(r.stdout, rec, res); werr != nil {
		return withCode(spec.ExitInternal, werr)
	}
	given := *r.controlCases
	if *r.maxCases > 0 {
		given = 0 // the run's work was the user's to bound
	}
	v := run.Judge(res, verdict.Options{ExpectControls: *r.expect, Known: r.known, Stalls: stalls, ControlCases: given})
	v.Text(r.stdout, res)
	r.prof.report(r.stdout) // the batch sizes drawn at --profile (profile.go)
	if *r.jsonPath != "" {
		fmt.Fprintf(r.stdout, "result written to %s\n", *r.jsonPath)
	}
	if runErr != nil {
		return withCode(spec.ExitInternal, runErr)
	}
	return verdictExit(v, res)
}

// verdictExit is the exit of a judged campaign: nil for a pass, else the
// status's exit code and the verdict in one line.
func verdictExit(v *verdict.Verdict, res *spec.Result) error {
	if err := v.Err(res); err != nil {
		return &exitError{code: v.Code(), err: err}
	}
	return nil
}

// runOneCase runs one case and prints its finding, if any (exit 1).
func runOneCase(ctx context.Context, stdout io.Writer, js, jsonPath string, explainIt bool, execNames []string) error {
	var c spec.Case
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return usageErr("run --case: %v", err)
	}
	if m := external.Missing(c, nil); len(m) > 0 {
		return usageErr("run --case: %s", strings.Join(m, "; "))
	}
	res, err := verdict.Case(ctx, c, gpu.HereEnv(), []string{"run", "--case", js}, scan.Checkers()...)
	switch {
	case relate.IsTargetFailure(err):
		return withCode(spec.ExitInternal, fmt.Errorf("run --case: %w", err))
	case err != nil:
		return usageErr("run --case: %v", err)
	case len(res.Findings) > 0 && explainIt:
		explainAll(ctx, stdout, res.Findings)
	}
	external.RecordAdapters(res, execNames)
	if jsonPath != "" {
		if err := atomicfile.WriteJSON(jsonPath, res); err != nil {
			return withCode(spec.ExitInternal, err)
		}
	}
	if len(res.Findings) == 0 {
		fmt.Fprintf(stdout, "%s holds on %s (%s)\n", c.Relation, strings.Join(c.Targets, ", "), c.Op)
		return nil
	}
	words.Numbered(stdout, 1, res.Findings[0], "")
	return &exitError{code: spec.ExitFinding}
}

func runSplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
