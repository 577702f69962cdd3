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
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/internal/gogc"
	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/reports/words"
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
	dur := fs.Duration("duration", 60*time.Second, "how long to generate cases (shrinking the last finding may add a few seconds)")
	seed := fs.Uint64("seed", 1, "campaign seed: the same seed draws the same cases per pair")
	targets := fs.String("targets", "", "comma-separated targets to run (default: all; see bitparity list)")
	rels := fs.String("relations", "", "comma-separated relations to run (default: all)")
	jsonPath := fs.String("json", "", "write the versioned result (spec.Result) to this file, atomically")
	caseJSON := fs.String("case", "", "run one case given as JSON (as printed by a repro line) instead of a campaign")
	maxCases := fs.Int64("max-cases", 0, "stop after this many cases (0: no limit)")
	workers := fs.Int("workers", 0, "cases run at once (0: one per CPU, GOMAXPROCS; 1 for one case at a time)")
	gpuStreams := fs.Int("gpu-streams", gpu.DefaultStreams, fmt.Sprintf("streams of each GPU the workers' checks are spread over (worker i on stream i mod `N`, 1 to %d): each stream submits its launches and copies apart from the others; 1 runs every check on the default stream", gpu.MaxStreams))
	noShrink := fs.Bool("no-shrink", false, "report findings as first found, without shrinking or drift maps")
	taps := fs.Bool("taps", true, "also compare fp32 intermediates (taps) when the outputs are equal; false: outputs only")
	e2eOn := fs.String("transformer-on", defaultTransformerOn(), "backends of the end-to-end transformer's train and inference paths: TRAIN,INFER or one name for both (cpu; cuda in a cuda build)")
	knownDirs := fs.String("known", "", "comma-separated case folders or bucket URLs of known, still-open findings (a team's corpus): a finding that is the same drift as an open case there (the same kind, op, relation and targets, in any dtype or seed, and a drift map that splits the swept values alike, or without maps the same minimal shape: docs/trust.md) is listed as known and does not fail the run; one that is the same drift as a case marked fixed is a regression")
	explainFindings := fs.Bool("explain", false, "infer the schedule behind each class of every finding's drift map (bitparity explain) and report it with the finding")
	minCases := fs.Int64("min-cases", 0, "the run is STALLED (exit 5) when a target ran fewer than `N` cases or stopped answering; 0: one case for --exec and --kernel targets, no minimum for the others")
	expect := fs.Bool("expect-controls", true, "treat findings on drift models (negative controls) as expected: exit 0 when every control was found and nothing else was")
	controlCases := fs.Int64("control-cases", verdict.DefaultControlCases, "the cases per relation a negative control is given: one not found in fewer (a busy machine) ran out of time, and the run is STALLED (exit 5), not NOT FOUND; 0, or a run bounded by --max-cases: every control not found is NOT FOUND")
	par := runParallelFlags(fs) // --gpus --procs --shard --corpus --work-dir (gpus.go)
	wk := runWorkerFlags(fs)    // --kernel --isolate (kernel.go)
	ex := runExecFlags(fs)      // --exec (exec.go)

	prof := addRunProfileFlags(fs) // --profile, --shrink-past-profile (profile.go)
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (runtime/pprof; read it with go tool pprof) to `FILE`")
	mutexProfile := fs.String("mutexprofile", "", "write the run's lock contention profile (runtime/pprof \"mutex\", every contention event) to `FILE`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bitparity run [flags]")
		fs.PrintDefaults()
	}
	if ok, err := parse(fs, args); !ok {
		return err
	}
	trainOn, inferOn, err := parseTransformerOn(*e2eOn)
	if err != nil {
		return usageErr("run: --transformer-on: %v", err)
	}
	known, err := loadKnown(*knownDirs, stderr)
	if err != nil {
		return usageErr("run: %v", err)
	}
	if fs.NArg() > 0 {
		return usageErr("run: unexpected arguments %q", fs.Args())
	}
	if err := runCheckFlags(fs); err != nil {
		return err
	}
	if err := checkOutputFile("json", *jsonPath); err != nil {
		return err
	}
	if err := gpu.SetStreams(*gpuStreams); err != nil {
		return usageErr("run: --gpu-streams: %v", err)
	}
	if err := checkOutputDir("corpus", par.corpus); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile("run", *cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	if *mutexProfile != "" {
		f, err := os.Create(*mutexProfile)
		if err != nil {
			return usageErr("run: --mutexprofile: %v", err)
		}
		runtime.SetMutexProfileFraction(1)
		defer func() {
			if err := pprof.Lookup("mutex").WriteTo(f, 0); err != nil {
				fmt.Fprintf(stderr, "run: --mutexprofile: %v\n", err)
			}
			f.Close()
		}()
	}
	tuneGC()
	ctx, stop := stopOnSignal(stderr)
	defer stop()
	workerNames, werr := wk.start(stderr)
	defer wk.close(stderr)
	if werr != nil {
		return werr
	}
	execNames, eerr := ex.start(ctx, "run")
	if eerr != nil {
		return eerr
	}
	if models, others := splitModelRoutes(execNames); len(models) > 0 && *caseJSON == "" {
		if len(others) > 0 || len(workerNames) > 0 || *targets != "" || par.parallel() {
			return usageErr("run: a model route (%v) runs alone: no other --exec, --kernel, --targets, --procs or --gpus", models)
		}
		relations, err := modelRelations(runSplitList(*rels))
		if err != nil {
			return err
		}
		return runModelRoutes(ctx, stdout, stderr, models, modelRunOpts{duration: *dur, seed: *seed, maxCases: *maxCases,
			relations: relations, known: known, noShrink: *noShrink, jsonPath: *jsonPath, corpus: par.corpus, args: args})
	}
	workerNames = append(workerNames, execNames...)
	if *caseJSON != "" {
		return runOneCase(ctx, stdout, *caseJSON, *jsonPath, *explainFindings, execNames)
	}
	c := &fuzz.Campaign{
		Duration:  *dur,
		Seed:      *seed,
		Targets:   append(runSplitList(*targets), workerNames...),
		Relations: runSplitList(*rels),
		MaxCases:  *maxCases,
		Workers:   *workers,
		NoShrink:  *noShrink,
		NoTaps:    !*taps,
	}
	if err := prof.apply(c); err != nil {
		return err
	}
	prog := reports.NewProgress(stderr, *dur)
	c.ProgressEvery = 200 * time.Millisecond
	for _, name := range c.Targets {
		if _, err := target.Lookup(name); err != nil {
			return usageErr("run: %v", err)
		}
	}
	for _, name := range c.Relations {
		if _, err := fuzz.RelationByName(name); err != nil {
			return usageErr("run: %v", err)
		}
	}
	if err := par.apply(c); err != nil {
		return err
	}
	head := spec.Result{Version: spec.ResultVersion, Started: time.Now().UTC(), Seed: *seed, Env: hereEnv(),
		Args: append([]string{"run"}, args...)}
	c.Env = head.Env // the findings record the whole fingerprint, the GPU's too
	rec, err := openRecorder(stderr, par.corpus, *jsonPath, head)
	if err != nil {
		return usageErr("%v", err)
	}
	// progress counts every finding recorded, found or shrunk, on top of
	// the cases of the phases before the campaign (the transformer share)
	var before int64
	c.Progress = func(s fuzz.Stats) { prog.Update(before+s.Cases, rec.Findings()) }
	fmt.Fprintf(stdout, "bitparity run: seed %d, %s, %d pairs of target and relation\n", *seed, *dur, runCountPairs(c))
	// The end-to-end transformer (train vs inference path) takes a share of
	// a full campaign: every target and relation, in this process. It runs
	// first, so the cases its controls are owed past its share come out of
	// --duration too; the campaign gets what is left, less its shrinking
	// grace (Campaign.Grace).
	var e2e *e2eRun
	if *targets == "" && *rels == "" && len(workerNames) == 0 && !par.parallel() {
		// its unexpected findings are kept as they are found, and its cases
		// counted as they run: a signal during the share loses none of them
		hooks := e2eHooks{found: rec.Found, shrunk: rec.Shrunk,
			progress: func(s fuzz.Stats) { prog.Update(s.Cases, rec.Findings()) }}
		if e2e, err = runTransformerFirst(ctx, transformerShare(*dur), *seed, trainOn, inferOn, hooks); err != nil && ctx.Err() == nil {
			return withCode(spec.ExitInternal, fmt.Errorf("run: transformer: %w", err))
		}
		if e2e != nil {
			c.Duration -= e2e.took
			before = e2e.res.Cases
			prog.Update(before, rec.Findings())
		}
	}
	// the campaign generates for all of what is left: shrinking what it
	// found last may add up to the campaign's grace (3 s) after it
	c.Duration = max(c.Duration, time.Second)
	var res *spec.Result
	if par.parallel() {
		if res, err = par.run(ctx, stdout, stderr, fs, *maxCases); res == nil {
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
	var e2eErr error
	if ctx.Err() != nil {
		res.Interrupted = true
	}
	if e2e != nil {
		e2eErr = e2e.fold(stdout, res)
		if res.Interrupted {
			e2eErr = nil // its controls were not all reached; its unexpected findings are in res
		}
	}
	res.Stalls = append(res.Stalls, processStalls()...)
	stalls := verdict.Stalls(res, *minCases, workerNames)
	res.Args = append([]string{"run"}, args...)
	if *explainFindings {
		explainAll(ctx, stderr, res.Findings)
	}
	recordAdapters(res, execNames)
	if werr := rec.Finish(res); werr != nil {
		return withCode(spec.ExitInternal, fmt.Errorf("run: %w", werr))
	}
	if werr := par.after(stdout, res, rec.Created()); werr != nil {
		return withCode(spec.ExitInternal, werr)
	}
	given := *controlCases
	if *maxCases > 0 {
		given = 0 // the run's work was the user's to bound
	}
	v := verdict.Of(res, verdict.Options{ExpectControls: *expect, Known: known, Stalls: stalls, ControlCases: given})
	runPrintResult(stdout, res, v)
	prof.report(stdout) // the batch sizes drawn at --profile (profile.go)
	if *jsonPath != "" {
		fmt.Fprintf(stdout, "result written to %s\n", *jsonPath)
	}
	if err != nil {
		return withCode(spec.ExitInternal, err)
	}
	if v.Status == verdict.Pass && e2eErr != nil {
		return &exitError{code: spec.ExitFinding, err: fmt.Errorf("transformer: %w", e2eErr)}
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
		if len(c.Relations) > 0 && !runInList(c.Relations, p.Relation) {
			continue
		}
		hit := len(c.Targets) == 0
		for _, t := range p.Targets {
			hit = hit || runInList(c.Targets, t)
		}
		if hit {
			n++
		}
	}
	return n
}

func runInList(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
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
