package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/transformer"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/internal/gogc"
	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/verdict"
)

// tuneGC sets the garbage collector's target of a campaign
// (gogc.Campaign) unless GOGC is set.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gogc.Campaign)
	}
}

// runCmd is `bitparity run`. Exit codes: 0 when nothing unexpected was
// found (with --expect-controls, the default, findings on drift models are
// the expected negative controls, and every control in the run must have
// been found); 1 when a finding is unexpected, or a control was missed
// after its --control-cases; 2 for bad flags or a bad case; 3 for internal
// failures; 5 when the run stalled (a control that ran out of time among
// them); 6 when a signal interrupted it.
func runCmd(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := newRunFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bitparity run [flags]")
		fs.PrintDefaults()
	}
	if ok, err := parse(fs, args); !ok {
		return err
	}
	r := &runState{runFlags: f, fs: fs, args: args, stdout: stdout, stderr: stderr}
	if err := r.check(); err != nil {
		return err
	}
	stopProfiles, err := r.startProfiles()
	if err != nil {
		return err
	}
	defer stopProfiles()
	tuneGC()
	ctx, stop := stopOnSignal(stderr)
	defer stop()
	workerNames, werr := f.wk.start(stderr)
	defer f.wk.close(stderr)
	if werr != nil {
		return werr
	}
	execNames, eerr := f.ex.start(ctx, "run")
	if eerr != nil {
		return eerr
	}
	if models, others := splitModelRoutes(execNames); len(models) > 0 && *f.caseJSON == "" {
		if len(others) > 0 || len(workerNames) > 0 || *f.targets != "" || f.par.parallel() {
			return usageErr("run: a model route (%v) runs alone: no other --exec, --kernel, --targets, --procs or --gpus", models)
		}
		relations, err := modelRelations(runSplitList(*f.rels))
		if err != nil {
			return err
		}
		return runModelRoutes(ctx, stdout, stderr, models, modelRunOpts{duration: *f.dur, seed: *f.seed, maxCases: *f.maxCases,
			relations: relations, known: r.known, noShrink: *f.noShrink, jsonPath: *f.jsonPath, corpus: f.par.corpus, args: args})
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
	f.e2eOn = fs.String("transformer-on", defaultTransformerOn(), "backends of the end-to-end transformer's train and inference paths: TRAIN,INFER or one name for both (cpu; cuda in a cuda build)")
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
	if r.trainOn, r.inferOn, err = parseTransformerOn(*r.e2eOn); err != nil {
		return usageErr("run: --transformer-on: %v", err)
	}
	if r.known, err = loadKnown(*r.knownDirs, r.stderr); err != nil {
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

// startProfiles starts --cpuprofile and --mutexprofile; stop writes them.
func (r *runState) startProfiles() (stop func(), err error) {
	stopCPU, err := startCPUProfile("run", *r.cpuProfile)
	if err != nil {
		return nil, err
	}
	if *r.mutexProfile == "" {
		return stopCPU, nil
	}
	f, err := os.Create(*r.mutexProfile)
	if err != nil {
		stopCPU()
		return nil, usageErr("run: --mutexprofile: %v", err)
	}
	runtime.SetMutexProfileFraction(1)
	return func() {
		if err := pprof.Lookup("mutex").WriteTo(f, 0); err != nil {
			fmt.Fprintf(r.stderr, "run: --mutexprofile: %v\n", err)
		}
		f.Close()
		stopCPU()
	}, nil
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
		if _, err := fuzz.RelationByName(name); err != nil {
			return nil, usageErr("run: %v", err)
		}
	}
	if err := r.par.apply(c); err != nil {
		return nil, err
	}
	return c, nil
}

// campaign runs the campaign (after the transformer's share, in a full
// one), records and judges its result, and prints it.
func (r *runState) campaign(ctx context.Context) error {
	c, err := r.newCampaign()
	if err != nil {
		return err
	}
	prog := reports.NewProgress(r.stderr, *r.dur)
	head := spec.Result{Version: spec.ResultVersion, Started: time.Now().UTC(), Seed: *r.seed, Env: hereEnv(),
		Args: append([]string{"run"}, r.args...)}
	c.Env = head.Env // the findings record the whole fingerprint, the GPU's too
	rec, err := openRecorder(r.stderr, r.par.corpus, *r.jsonPath, head)
	if err != nil {
		return usageErr("%v", err)
	}
	// progress counts every finding recorded, found or shrunk, on top of
	// the cases of the phases before the campaign (the transformer share)
	var before int64
	c.Progress = func(s fuzz.Stats) { prog.Update(before+s.Cases, rec.Findings()) }
	fmt.Fprintf(r.stdout, "bitparity run: seed %d, %s, %d pairs of target and relation\n", *r.seed, *r.dur, runCountPairs(c))
	e2e, err := r.transformerShare(ctx, c, rec, prog)
	if err != nil {
		return err
	}
	if e2e != nil {
		before = e2e.res.Cases
	}
	// the campaign generates for all of what is left: shrinking what it
	// found last may add up to the campaign's grace (3 s) after it
	c.Duration = max(c.Duration, time.Second)
	var res *spec.Result
	if r.par.parallel() {
		if res, err = r.par.run(ctx, r.stdout, r.stderr, r.fs, *r.maxCases); res == nil {
			return err
		}
		prog.Update(res.Cases, len(res.Findings))
	} else {
		res, err = rec.Run(ctx, c, 0)
		if res != nil {
			prog.Update(before+res.Cases, max(rec.Findings(), len(res.Findings)))
		}
	}
	prog.Finish()
	if res == nil {
		if errors.Is(err, fuzz.ErrNoPairs) {
			return usageErr("run: %v", err)
		}
		return withCode(spec.ExitInternal, err)
	}
	return r.finish(ctx, rec, res, e2e, err)
}

// transformerShare runs the end-to-end transformer (train vs inference
// path) for its share of a full campaign (every target and relation, in
// this process; nil otherwise) and takes its time from c.Duration. It runs
// first, so the cases its controls are owed past its share come out of
// --duration too; the campaign gets what is left, less its shrinking
// grace (Campaign.Grace).
func (r *runState) transformerShare(ctx context.Context, c *fuzz.Campaign, rec *verdict.Recorder, prog *reports.Progress) (*e2eRun, error) {
	if *r.targets != "" || *r.rels != "" || len(r.procs) > 0 || r.par.parallel() {
		return nil, nil
	}
	// its unexpected findings are kept as they are found, and its cases
	// counted as they run: a signal during the share loses none of them
	hooks := e2eHooks{found: rec.Found, shrunk: rec.Shrunk,
		progress: func(s fuzz.Stats) { prog.Update(s.Cases, rec.Findings()) }}
	e2e, err := runTransformerFirst(ctx, transformer.Share(*r.dur), *r.seed, r.trainOn, r.inferOn, hooks)
	if err != nil && ctx.Err() == nil {
		return nil, withCode(spec.ExitInternal, fmt.Errorf("run: transformer: %w", err))
	}
	if e2e != nil {
		c.Duration -= e2e.took
		prog.Update(e2e.res.Cases, rec.Findings())
	}
	return e2e, nil
}

// finish folds the transformer's share into res, records it, judges it
// (verdict.Of) and prints it; runErr is the campaign's own error.
func (r *runState) finish(ctx context.Context, rec *verdict.Recorder, res *spec.Result, e2e *e2eRun, runErr error) error {
	if ctx.Err() != nil {
		res.Interrupted = true
	}
	var share *verdict.Verdict
	if e2e != nil {
		share = e2e.fold(r.stdout, res)
	}
	res.Stalls = append(res.Stalls, processStalls()...)
	stalls := verdict.Stalls(res, *r.minCases, r.procs)
	res.Args = append([]string{"run"}, r.args...)
	if *r.explain {
		explainAll(ctx, r.stderr, res.Findings)
	}
	recordAdapters(res, r.execNames)
	if werr := rec.Finish(res); werr != nil {
		return withCode(spec.ExitInternal, fmt.Errorf("run: %w", werr))
	}
	if werr := r.par.after(r.stdout, res, rec.Created()); werr != nil {
		return withCode(spec.ExitInternal, werr)
	}
	given := *r.controlCases
	if *r.maxCases > 0 {
		given = 0 // the run's work was the user's to bound
	}
	v := verdict.Of(res, verdict.Options{ExpectControls: *r.expect, Known: r.known, Stalls: stalls, ControlCases: given})
	runPrintResult(r.stdout, res, v)
	r.prof.report(r.stdout) // the batch sizes drawn at --profile (profile.go)
	if *r.jsonPath != "" {
		fmt.Fprintf(r.stdout, "result written to %s\n", *r.jsonPath)
	}
	if runErr != nil {
		return withCode(spec.ExitInternal, runErr)
	}
	if st := verdict.WithShare(v, share); st != v.Status {
		return &exitError{code: st.Code(), err: fmt.Errorf("transformer: %w", shareErr(share, e2e.res.Targets))}
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
	if m := missingAdapters(c, nil); len(m) > 0 {
		return usageErr("run --case: %s", strings.Join(m, "; "))
	}
	start := time.Now()
	f, err := fuzz.Check(ctx, c, composites()...)
	if err != nil {
		if fuzz.IsTargetFailure(err) {
			return withCode(spec.ExitInternal, fmt.Errorf("run --case: %w", err))
		}
		return usageErr("run --case: %v", err)
	}
	res := &spec.Result{Version: spec.ResultVersion, Started: start.UTC(), Duration: spec.Duration(time.Since(start)),
		Seed: c.Seed, Cases: 1, Env: hereEnv(), Args: []string{"run", "--case", js}}
	for _, name := range c.Targets {
		if t, err := target.Lookup(name); err == nil {
			res.Targets = append(res.Targets, spec.TargetStats{Target: name, Cases: 1, Invariant: t.Info().Invariant,
				Op: t.Info().Op, Relations: []string{c.Relation}})
		}
	}
	if f != nil {
		res.Findings = []spec.Finding{*f}
		if explainIt {
			explainAll(ctx, stdout, res.Findings)
			*f = res.Findings[0]
		}
	}
	recordAdapters(res, execNames)
	if jsonPath != "" {
		if err := runWriteJSONAtomic(jsonPath, res); err != nil {
			return withCode(spec.ExitInternal, err)
		}
	}
	if f == nil {
		fmt.Fprintf(stdout, "%s holds on %s (%s)\n", c.Relation, strings.Join(c.Targets, ", "), c.Op)
		return nil
	}
	runPrintFinding(stdout, 1, *f, "")
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

func runCountPairs(c *fuzz.Campaign) int {
	n := 0
	for _, p := range fuzz.PairsNaming(c.Targets) {
		if len(c.Relations) > 0 && !slices.Contains(c.Relations, p.Relation) {
			continue
		}
		hit := len(c.Targets) == 0
		for _, t := range p.Targets {
			hit = hit || slices.Contains(c.Targets, t)
		}
		if hit {
			n++
		}
	}
	for _, src := range c.Sources { // the op packages' targets named (scan.OpSources)
		for _, j := range src.Jobs {
			if len(c.Relations) == 0 || slices.Contains(c.Relations, j.Relation) {
				n++
			}
		}
	}
	return n
}

func runTargetsOf(f spec.Finding) string {
	if f.TargetB != "" {
		return f.TargetA + " vs " + f.TargetB
	}
	return f.TargetA
}

// runWriteJSONAtomic writes v as indented JSON to path through a temporary
// file in the same folder and a rename, so a reader never sees half a file.
func runWriteJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	return atomicfile.Write(path, append(b, '\n'))
}

// runPrintResult prints every finding with its verdict note, then the
// summary: the controls, the invariant targets, each target's counts and
// the status (INTERRUPTED, STALLED) when the run did not pass.
func runPrintResult(w io.Writer, res *spec.Result, s *verdict.Verdict) {
	fmt.Fprintf(w, "\n%d cases in %s (%.0f cases/s), %d finding(s)\n\n", res.Cases,
		time.Duration(res.Duration).Round(time.Millisecond), float64(res.Cases)/max(1e-9, time.Duration(res.Duration).Seconds()), len(res.Findings))
	for i, f := range res.Findings {
		runPrintFinding(w, i+1, f, s.Notes[i])
	}
	fmt.Fprintln(w, "summary")
	if len(s.Controls) > 0 {
		fmt.Fprintln(w, "  negative controls (drift models, must be found):")
		for _, name := range s.Controls {
			fs := s.Expected[name]
			if len(fs) == 0 && res.Interrupted {
				fmt.Fprintf(w, "    %-30s not reached (interrupted)\n", name)
				continue
			}
			if len(fs) == 0 && slices.Contains(s.OutOfTime, name) {
				fmt.Fprintf(w, "    %-30s ran out of time (STALLED below)\n", name)
				continue
			}
			if len(fs) == 0 {
				fmt.Fprintf(w, "    %-30s NOT FOUND\n", name)
				continue
			}
			f := fs[0]
			what := string(f.Kind)
			if f.DriftMap != nil {
				what = words.Drift(f.DriftMap)
			}
			fmt.Fprintf(w, "    %-30s found by %s in %s (minimal after %s): %s\n", name, f.Relation,
				time.Duration(f.Elapsed).Round(time.Millisecond), time.Duration(f.Elapsed+f.ToMinimal).Round(time.Millisecond), what)
		}
	}
	fmt.Fprintf(w, "  invariant targets: %d cases (on pairs of invariant targets only), %d finding(s)\n", res.InvariantCases, s.InvariantFindings)
	fmt.Fprintln(w, "  per target (cases, findings, relations):")
	for _, ts := range res.Targets {
		fmt.Fprintf(w, "    %-30s %7d %3d  %s\n", ts.Target, ts.Cases, ts.Findings, strings.Join(ts.Relations, ", "))
	}
	if len(s.Known) > 0 {
		fmt.Fprintf(w, "  known findings (--known, not failing the run): %d\n", len(s.Known))
	}
	if len(s.Unexpected) > 0 {
		fmt.Fprintf(w, "  UNEXPECTED findings: %d\n", len(s.Unexpected))
	}
	for _, st := range s.Stalls {
		fmt.Fprintf(w, "STALLED: %s\n", st)
	}
	if res.Interrupted {
		fmt.Fprintf(w, "INTERRUPTED after %s: the verdict covers the %d cases run; not a pass\n",
			time.Duration(res.Duration).Round(time.Millisecond), res.Cases)
	}
}

// runPrintFinding prints one finding: minimal case, first diverging row and
// column, both values, ulps, drift map in words and the repro line.
func runPrintFinding(w io.Writer, n int, f spec.Finding, note string) {
	head := fmt.Sprintf("finding %d: %s, %s on %s", n, f.Kind, f.Relation, runTargetsOf(f))
	if note != "" {
		head += " [" + note + "]"
	}
	fmt.Fprintln(w, head)
	words.Detail(w, f)
	fmt.Fprintln(w)
}

// stopOnSignal returns a context cancelled by the first SIGINT or SIGTERM:
// the run stops generating cases, shrinks what was found for a bounded
// grace period and writes it (runDurably). It says so on stderr, so a
// worker's log shows why it stopped. A second signal ends the process at
// once (exit 128 + the signal's number): every finding printed is already
// stored. A --procs or --gpus worker (shardWorkerEnv set) takes every
// SIGTERM as the first: its SIGTERM is its parent's death, and Linux sends
// the parent-death signal again each time it hands the orphan to another
// thread of the dying parent (seen on a 16-core host: two SIGTERMs, and a
// worker that died without its result). stop releases the signals.
func stopOnSignal(stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	worker := os.Getenv(shardWorkerEnv) != ""
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "run: %v: stopping; what was found is shrunk for a bounded time and written (a second signal ends the run at once)\n", s)
			cancel()
		case <-done:
			return
		}
		for {
			select {
			case s := <-sigs:
				if worker && s == syscall.SIGTERM {
					fmt.Fprintf(stderr, "run: %v again: the parent's death, signalled once for each of its threads; still stopping\n", s)
					continue
				}
				fmt.Fprintf(stderr, "run: %v again: exiting at once\n", s)
				n := 2
				if sig, ok := s.(syscall.Signal); ok {
					n = int(sig)
				}
				os.Exit(128 + n)
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// startCPUProfile starts a CPU profile of the command into path (none
// when path is empty) and returns what stops it; a file that cannot be
// written is a usage error.
func startCPUProfile(cmd, path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usageErr("%s: --cpuprofile: %v", cmd, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, usageErr("%s: --cpuprofile: %v", cmd, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
