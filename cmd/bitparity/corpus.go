package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
)

// Environment variables mirroring the corpus flags.
const (
	envCorpus = "BITPARITY_CORPUS"        // -dir
	envShared = "BITPARITY_SHARED_CORPUS" // -shared, a list separated by the OS path list separator
)

type subcommand struct {
	summary string
	run     func(ctx context.Context, stdout, stderr io.Writer, st *storeFlags, fs *flag.FlagSet, args []string) error
	usage   string
}

var corpusSubs = map[string]subcommand{
	"ls":       {"list the cases: name, status, op, relation, targets, finding", corpusLs, "[DIR]"},
	"show":     {"print one case file in words (or -json)", corpusShow, "NAME|FILE"},
	"merge":    {"copy the cases of other corpus folders into the local one", corpusMerge, "DIR..."},
	"dedup":    {"keep one case per finding signature, delete the others (-n: only say)", corpusDedup, "[DIR]"},
	"minimize": {"shrink a finding's case again with fuzz/shrink and store the result", corpusMinimize, "NAME|FILE..."},
	"import":   {"turn go test -fuzz inputs (testdata/fuzz/FuzzX/*, $GOCACHE/fuzz/...) and run --json results into cases", corpusImport, "PATH..."},
	"export":   {"write cases as go test -fuzz corpus entries under -to", corpusExport, "[NAME|FILE...]"},
	"bundle":   {"write cases as a tar.gz with a manifest and checksums (-o FILE)", corpusBundle, "[NAME...]"},
	"unbundle": {"validate a bundle and store every good case; report each bad one", corpusUnbundle, "FILE"},
	"recheck":  {"replay every open finding and every unbundled case not yet replayed here (-all: every case), mark those that no longer reproduce fixed; rerun every valid certificate's scan and every open scan drift's", corpusRecheck, "[DIR]"},
}

func corpusUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: bitparity corpus SUBCOMMAND [flags] [args]")
	fmt.Fprintln(w, "\nsubcommands:")
	names := make([]string, 0, len(corpusSubs))
	for n := range corpusSubs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, corpusSubs[n].summary)
	}
	fmt.Fprintf(w, "\nthe local corpus is -dir (default $%s, else ./bitparity-corpus); -shared DIR (repeatable,\n", envCorpus)
	fmt.Fprintf(w, "or $%s) adds folders read but never written. docs/corpus.md has the file format.\n", envShared)
}

// storeFlags are the flags every corpus subcommand has.
type storeFlags struct {
	dir    string
	shared multiFlag
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func defaultDir() string {
	if d := os.Getenv(envCorpus); d != "" {
		return d
	}
	return "bitparity-corpus"
}

// dirArg takes the one positional argument of ls, dedup and recheck as the
// corpus folder (`corpus ls DIR` is `corpus ls -dir DIR`); more arguments,
// or a DIR that contradicts -dir, are usage errors.
func (s *storeFlags) dirArg(fs *flag.FlagSet) error {
	switch {
	case fs.NArg() == 0:
		return nil
	case fs.NArg() > 1:
		return usageErr("%s: want at most one folder, got %q", fs.Name(), fs.Args())
	case flagSet(fs, "dir") && fs.Arg(0) != s.dir:
		return usageErr("%s: the folder is given twice (-dir %s and %s): give it once", fs.Name(), s.dir, fs.Arg(0))
	}
	s.dir = fs.Arg(0)
	return nil
}

// open returns the layered store: the local folder or bucket (a folder is
// created when create) over the shared read-only folders or buckets.
func (s *storeFlags) open(create bool) (*corpus.Layered, error) {
	local, err := corpus.Open(context.Background(), s.dir, create)
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return nil, usageErr("%v (name a corpus folder with -dir DIR or $%s; bitparity run --corpus DIR stores a campaign's findings in one)", err, envCorpus)
	}
	if err != nil {
		return nil, withCode(spec.ExitUsage, err)
	}
	shared := []string(s.shared)
	if len(shared) == 0 {
		if v := os.Getenv(envShared); v != "" {
			shared = filepath.SplitList(v)
		}
	}
	var ro []corpus.Store
	for _, p := range shared {
		d, err := corpus.Open(context.Background(), p, false)
		if err != nil {
			return nil, withCode(spec.ExitUsage, fmt.Errorf("shared corpus: %w", err))
		}
		ro = append(ro, d)
	}
	return corpus.NewLayered(local, ro...), nil
}

func corpusCmd(stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		corpusUsage(stdout)
		if len(args) == 0 {
			return &exitError{code: spec.ExitUsage}
		}
		return nil
	}
	sub, ok := corpusSubs[args[0]]
	if !ok {
		corpusUsage(stderr)
		return usageErr("corpus: unknown subcommand %q", args[0])
	}
	fs := flag.NewFlagSet("corpus "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	st := &storeFlags{}
	fs.StringVar(&st.dir, "dir", defaultDir(), "local corpus folder or bucket URL (written); $"+envCorpus)
	fs.Var(&st.shared, "shared", "shared corpus folder or bucket URL (s3://, gs://, azblob://, file://), read only (repeatable); $"+envShared)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bitparity corpus %s [flags] %s\n%s\n", args[0], sub.usage, sub.summary)
		fs.PrintDefaults()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return sub.run(ctx, stdout, stderr, st, fs, args[1:])
}

// resolve finds a case by path (an existing file) or by name in s ("0123abcd..."
// with or without .json).
func resolve(s corpus.Store, arg string) (name string, f *corpus.File, err error) {
	if st, serr := os.Stat(arg); serr == nil && !st.IsDir() {
		f, err := corpus.ReadFile(arg)
		if err != nil {
			return "", nil, withCode(spec.ExitUsage, err)
		}
		name, _ := f.Name()
		return name, f, nil
	}
	name = strings.TrimSuffix(filepath.Base(arg), ".json") + ".json"
	f, err = s.Get(name)
	if errors.Is(err, corpus.ErrNotFound) || (err != nil && !corpus.IsName(name)) {
		return "", nil, usageErr("%s: no such case file or case name", arg)
	}
	if err != nil {
		return "", nil, withCode(spec.ExitUsage, err)
	}
	return name, f, nil
}

// selectEntries returns the cases named by args (names or paths, see
// resolve), or every case of s when args is empty, warning on stderr about
// files that do not decode.
func selectEntries(stderr io.Writer, s corpus.Store, args []string) ([]corpus.Entry, error) {
	if len(args) == 0 {
		entries, errs := corpus.Load(s)
		warnAll(stderr, errs)
		return entries, nil
	}
	var entries []corpus.Entry
	for _, arg := range args {
		name, f, err := resolve(s, arg)
		if err != nil {
			return nil, err
		}
		entries = append(entries, corpus.Entry{Name: name, File: f})
	}
	return entries, nil
}

func warnAll(stderr io.Writer, errs []error) {
	for _, err := range errs {
		fmt.Fprintln(stderr, "warning:", err)
	}
}

// describe is a one-line summary of a case: op, relation, targets, shape.
func describe(c spec.Case) string {
	return fmt.Sprintf("%s %s on %s %s", c.Op, c.Relation, strings.Join(c.Targets, ","), words.Case(c))
}

func corpusLs(_ context.Context, stdout, stderr io.Writer, st *storeFlags, fs *flag.FlagSet, args []string) error {
	asJSON := fs.Bool("json", false, "print one JSON object per line: name, status, signature, case")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if err := st.dirArg(fs); err != nil {
		return err
	}
	s, err := st.open(false)
	if err != nil {
		return err
	}
	entries, errs := corpus.Load(s)
	warnAll(stderr, errs)
	for _, e := range entries {
		f := e.File
		if *asJSON {
			b, _ := json.Marshal(map[string]any{"name": e.Name, "status": f.Status.State, "imported": f.Status.Imported, "signature": f.Signature, "case": f.Case, "note": f.Note})
			fmt.Fprintln(stdout, string(b))
			continue
		}
		what := "pass"
		if f.Finding != nil {
			what = fmt.Sprintf("%s sig %s", f.Finding.Kind, f.Signature)
		}
		fmt.Fprintf(stdout, "%s  %-5s  %-22s  %s\n", e.Name, f.Status.State, what, describe(f.Case))
	}
	if d, ok := s.Local.(*corpus.Dir); ok && !*asJSON { // certificates and scan drifts live in folders (scan.go, scan_results.go)
		listCertificates(stdout, stderr, d)
		listScanDrifts(stdout, stderr, d)
	}
	if len(errs) > 0 {
		return withCode(spec.ExitUsage, fmt.Errorf("corpus ls: %d unreadable file(s)", len(errs)))
	}
	return nil
}

func corpusShow(_ context.Context, stdout, _ io.Writer, st *storeFlags, fs *flag.FlagSet, args []string) error {
	asJSON := fs.Bool("json", false, "print the case file itself (canonical JSON)")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("corpus show: want one NAME or FILE")
	}
	if ok, err := showCertificate(stdout, st.dir, fs.Arg(0), *asJSON); ok { // scan.go
		return err
	}
	s, err := st.open(false)
	if err != nil {
		return err
	}
	name, f, err := resolve(s, fs.Arg(0))
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := corpus.Encode(f)
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	}
	printFile(stdout, name, f)
	return nil
}

// printFile writes a case file in words.
func printFile(w io.Writer, name string, f *corpus.File) {
	fmt.Fprintf(w, "case %s: %s\n", name, describe(f.Case))
	if f.Note != "" {
		fmt.Fprintf(w, "note: %s\n", f.Note)
	}
	c := f.Case
	if c.Data != nil {
		fmt.Fprintf(w, "inputs: explicit data (%d tensors)\n", len(c.Data.Tensors))
	} else {
		fmt.Fprintf(w, "inputs: seed %d, %s values, generator v%d\n", c.Seed, c.Dist, c.GenVersion)
	}
	if fd := f.Finding; fd != nil {
		printFinding(w, "finding", fd)
		if fd.DriftMap != nil {
			fmt.Fprintf(w, "drift map: %s\n", words.Drift(fd.DriftMap))
		}
		fmt.Fprintf(w, "signature: %s\n", f.Signature)
	} else {
		fmt.Fprintln(w, "finding: none (a regression case that must keep passing)")
	}
	fmt.Fprintf(w, "recorded in: %s\n", words.Env(f.Env))
	switch f.Status.State {
	case corpus.StateFixed:
		fmt.Fprintf(w, "status: fixed since %s", f.Status.FixedAt.Format(time.RFC3339))
		if f.Status.FixedKernelHash != "" {
			fmt.Fprintf(w, ", kernel %s", f.Status.FixedKernelHash)
		}
		if f.Status.FixedEnv != nil {
			fmt.Fprintf(w, ", in %s", words.Env(*f.Status.FixedEnv))
		}
		fmt.Fprintln(w)
	default:
		fmt.Fprint(w, "status: open")
		if f.Status.Imported {
			fmt.Fprint(w, ", imported from another corpus and not yet rechecked here")
		}
		if !f.Status.Checked.IsZero() {
			fmt.Fprintf(w, ", last rechecked %s", f.Status.Checked.Format(time.RFC3339))
		}
		fmt.Fprintln(w)
	}
}

// printFinding says fd in words (reports.Words) after a label.
func printFinding(w io.Writer, label string, fd *spec.Finding) {
	fmt.Fprintf(w, "%s: %s\n", label, words.Finding(*fd))
}

func corpusMerge(_ context.Context, stdout, stderr io.Writer, st *storeFlags, fs *flag.FlagSet, args []string) error {
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("corpus merge: want one or more corpus folders to merge from")
	}
	s, err := st.open(true)
	if err != nil {
		return err
	}
	var srcs []corpus.Store
	for _, p := range fs.Args() {
		d, err := corpus.Open(context.Background(), p, false)
		if err != nil {
			return withCode(spec.ExitUsage, err)
		}
		srcs = append(srcs, d)
	}
	rep, err := corpus.Merge(s, srcs...)
	if err != nil {
		return err
	}
	warnAll(stderr, rep.Bad)
	for _, n := range rep.Added {
		fmt.Fprintf(stdout, "added %s\n", n)
	}
	fmt.Fprintf(stdout, "merged into %s: %d added, %d already there, %d unreadable\n", st.dir, len(rep.Added), len(rep.Existing), len(rep.Bad))
	if len(rep.Bad) > 0 {
		return &exitError{code: spec.ExitUsage}
	}
	return nil
}

func corpusDedup(_ context.Context, stdout, stderr io.Writer, st *storeFlags, fs *flag.FlagSet, args []string) error {
	dry := fs.Bool("n", false, "only print what would be deleted")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if err := st.dirArg(fs); err != nil {
		return err
	}
	s, err := st.open(false)
	if err != nil {
		return err
	}
	entries, _ := selectEntries(stderr, s, nil)
	groups := corpus.Dedup(entries)
	dropped := 0
	for _, g := range groups {
		fmt.Fprintf(stdout, "signature %s: keep %s\n", g.Signature, g.Keep)
		for _, n := range g.Drop {
			if *dry {
				fmt.Fprintf(stdout, "  would delete %s\n", n)
				continue
			}
			if err := s.Delete(n); err != nil {
				fmt.Fprintf(stderr, "warning: %s: %v\n", n, err)
				continue
			}
			dropped++
			fmt.Fprintf(stdout, "  deleted %s\n", n)
		}
	}
	if d, ok := s.Local.(*corpus.Dir); ok {
		if n, _ := d.CleanTemp(time.Hour); n > 0 {
			fmt.Fprintf(stdout, "removed %d temp file(s) left by killed writers\n", n)
		}
	}
	fmt.Fprintf(stdout, "%d signature(s) with duplicates, %d file(s) deleted\n", len(groups), dropped)
	return nil
}

func corpusMinimize(ctx context.Context, stdout, stderr io.Writer, st *storeFlags, fs *flag.FlagSet, args []string) error {
	tries := fs.Int("max-tries", 0, "bound the fuzz.Check calls per case (0: the shrinker's default)")
	keep := fs.Bool("keep", false, "keep the original case file (default: delete it from the local corpus)")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("corpus minimize: want one or more NAME or FILE")
	}
	s, err := st.open(true)
	if err != nil {
		return err
	}
	for _, arg := range fs.Args() {
		name, f, err := resolve(s, arg)
		if err != nil {
			return err
		}
		g, stats, err := corpus.Minimize(ctx, f, shrink.Options{MaxTries: *tries})
		if errors.Is(err, corpus.ErrNoFinding) || errors.Is(err, corpus.ErrModelCase) {
			return usageErr("corpus minimize: %s: %v", name, err)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		newName, _, err := s.Put(g)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s -> %s: %s -> %s (%d steps, %d tries, %s)\n", name, newName,
			words.Case(f.Case), words.Case(g.Case), stats.Steps, stats.Tried, stats.Elapsed.Round(time.Millisecond))
		if !*keep && newName != name {
			if err := s.Delete(name); err != nil && !errors.Is(err, corpus.ErrNotFound) {
				fmt.Fprintf(stderr, "warning: kept %s: %v\n", name, err)
			}
		}
	}
	return nil
}

func corpusBundle(_ context.Context, stdout, stderr io.Writer, st *storeFlags, fs *flag.FlagSet, args []string) error {
	out := fs.String("o", "", "bundle file to write (.tar.gz); required")
	open := fs.Bool("open", false, "only open findings")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if *out == "" {
		return usageErr("corpus bundle: -o FILE is required")
	}
	s, err := st.open(false)
	if err != nil {
		return err
	}
	entries, err := selectEntries(stderr, s, fs.Args())
	if err != nil {
		return err
	}
	if *open {
		kept := entries[:0]
		for _, e := range entries {
			if e.File.Finding != nil && e.File.Status.State == corpus.StateOpen {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	if fi, err := os.Stat(filepath.Dir(*out)); err != nil || !fi.IsDir() {
		return usageErr("corpus bundle: -o %s: its folder does not exist", *out)
	}
	var m *corpus.Manifest
	err = atomicfile.WriteFunc(*out, func(w io.Writer) error {
		var err error
		m, err = corpus.WriteBundle(w, entries)
		return err
	})
	if err != nil {
		return err
	}
	info, _ := os.Stat(*out)
	fmt.Fprintf(stdout, "wrote %s: %d case(s), %d bytes\n", *out, len(m.Files), info.Size())
	return nil
}

func corpusUnbundle(_ context.Context, stdout, stderr io.Writer, st *storeFlags, fs *flag.FlagSet, args []string) error {
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("corpus unbundle: want one bundle FILE")
	}
	fh, err := os.Open(fs.Arg(0))
	if err != nil {
		return withCode(spec.ExitUsage, err)
	}
	defer fh.Close()
	s, err := st.open(true)
	if err != nil {
		return err
	}
	rep, err := corpus.Unbundle(fh, s)
	for _, n := range rep.Added {
		fmt.Fprintf(stdout, "added %s\n", n)
	}
	for _, n := range rep.Reopened {
		fmt.Fprintf(stdout, "open  %s: the bundle says fixed; open here until corpus recheck shows it fixed\n", n)
	}
	for _, b := range rep.Bad {
		fmt.Fprintf(stderr, "refused %s\n", b.Error())
	}
	fmt.Fprintf(stdout, "unbundled %s into %s: %d added, %d already there, %d refused\n",
		fs.Arg(0), st.dir, len(rep.Added), len(rep.Existing), len(rep.Bad))
	if err != nil {
		return withCode(spec.ExitUsage, err)
	}
	if len(rep.Bad) > 0 {
		return withCode(spec.ExitUsage, fmt.Errorf("corpus unbundle: %d member(s) refused; the others were stored", len(rep.Bad)))
	}
	return nil
}

// corpusRecheck replays the cases corpus.Rechecks selects (-all: every
// one). It exits 1 when a finding still reproduces or fails again, a pass
// case finds something, a crash is flaky (corpus.Flaky: it did not show on
// every replay, and stays open) or a certificate no longer holds, 3 when a
// case or scan could not be run here, 0 when every finding replayed is
// fixed, every pass case passes and every certificate holds.
func corpusRecheck(ctx context.Context, stdout, stderr io.Writer, st *storeFlags, fs *flag.FlagSet, args []string) error {
	kernel := fs.String("kernel-hash", "", "kernel or PTX hash of the build under test, recorded on the cases it fixes")
	ex := runExecFlags(fs) // --exec: the adapters of cases on exec: targets
	kernels := fs.String("kernel", "", "rerun the certificates of the user kernel of this manifest (comma-separated for several), matched by its name")
	fromCert := fs.Bool("kernel-from-certificate", false, "rerun each user kernel's certificate with the manifest path it records (the code that path names runs on the GPU: read it first)")
	all := fs.Bool("all", false, "replay every case, fixed findings and pass cases too (default: open findings, and every case unbundled from another corpus that no recheck here has replayed)")
	kpaths := kernelPathFlag(fs)
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if err := st.dirArg(fs); err != nil {
		return err
	}
	kr, err := newKernelRecheck(*kernels, *fromCert, *kpaths)
	if err != nil {
		return err
	}
	s, err := st.open(false)
	if err != nil {
		return err
	}
	if _, err := ex.start(ctx, "corpus recheck"); err != nil {
		return err
	}
	defer external.CloseAll()
	if err := recheckAdapters(s, *all); err != nil {
		return err
	}
	env := hereEnv()
	if *kernel != "" {
		env.KernelHash = *kernel
	}
	res, err := corpus.Recheck(ctx, s, env, *all, composites()...)
	if err != nil {
		return err
	}
	failing, broken := printRecheck(stdout, res)
	if d, ok := s.Local.(*corpus.Dir); ok { // certificates live in corpus folders (scan.go)
		invalid, cbroken, err := recheckCertificates(ctx, stdout, d, env, kr)
		if err != nil {
			return err
		}
		open, dbroken, err := recheckScanDrifts(ctx, stdout, d, env, kr)
		if err != nil {
			return err
		}
		failing, broken = failing+invalid+open, broken+cbroken+dbroken
	}
	switch {
	case failing > 0:
		return &exitError{code: spec.ExitFinding}
	case broken > 0:
		return &exitError{code: spec.ExitInternal}
	}
	return nil
}

// printRecheck prints one line per rechecked case and the counts, and
// returns the cases still failing (a flaky crash is open: never a pass,
// so it counts) and those that could not run.
func printRecheck(stdout io.Writer, res []corpus.RecheckResult) (failing, broken int) {
	var flaky, fixed, passed int
	for _, r := range res {
		switch {
		case r.Err != nil:
			broken++
			fmt.Fprintf(stdout, "could not run %s: %v\n", r.Name, r.Err)
		case r.Fixed:
			fixed++
			fmt.Fprintf(stdout, "fixed         %s\n", r.Name)
		case r.Outcome.Verdict == corpus.NotReproduced:
			fixed++
			fmt.Fprintf(stdout, "still fixed   %s\n", r.Name)
		case r.Outcome.Verdict == corpus.Passed:
			passed++
			fmt.Fprintf(stdout, "passes        %s\n", r.Name)
		case r.Reopened:
			failing++
			fmt.Fprintf(stdout, "reopened      %s (marked fixed, fails again: %s)\n", r.Name, r.Outcome.Verdict)
		case r.Outcome.Verdict == corpus.Flaky:
			flaky++
			fmt.Fprintf(stdout, "flaky         %s (the recorded crash showed on %d of %d replays; kept open)\n", r.Name, r.Outcome.Crashes, r.Outcome.Replays)
		default:
			failing++
			fmt.Fprintf(stdout, "still failing %s (%s)\n", r.Name, r.Outcome.Verdict)
		}
	}
	fmt.Fprintf(stdout, "rechecked %d case(s): %d still failing, %d flaky, %d fixed, %d passing, %d could not run\n", len(res), failing, flaky, fixed, passed, broken)
	return failing + flaky, broken
}

// hereEnv is the environment fingerprint of this process, the one every
// command records and compares: the host's (spec.HostEnv) with the GPU's
// (gpu.Fingerprint: device name, compute capability, driver, CUDA
// version and kernel hash in the cuda build; nothing without it).
func hereEnv() spec.Env {
	e := spec.HostEnv()
	gpu.Fingerprint(&e)
	return e
}

func corpusImport(ctx context.Context, stdout, stderr io.Writer, st *storeFlags, fs *flag.FlagSet, args []string) error {
	gocache := fs.Bool("gocache", false, "also import the generated corpus of every native target under $GOCACHE/fuzz")
	targets := fs.String("targets", "", "target sets to run each input against, comma-separated, two-target sets joined by '+' (default: the native targets' own sets, with $BITPARITY_FUZZ_TARGETS)")
	all := fs.Bool("all", false, "also store inputs that find nothing, as cases that must pass")
	maxElems := fs.Int("max-elements", spec.MaxElements, "skip inputs whose case needs more input values")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	paths := fs.Args()
	if *gocache {
		dir, err := goCacheFuzzDir()
		if err != nil {
			return withCode(spec.ExitUsage, err)
		}
		paths = append(paths, dir)
	}
	if len(paths) == 0 {
		return usageErr("corpus import: want PATH... (testdata/fuzz, a FuzzX folder, an input file, a run --json result) or -gocache")
	}
	s, err := st.open(true)
	if err != nil {
		return err
	}
	// campaign result files (bitparity run --json) first; the rest are go
	// fuzz inputs or folders of them
	fuzzPaths, bad, err := importResults(stdout, stderr, s, paths)
	if err != nil {
		return err
	}
	if len(fuzzPaths) == 0 {
		if bad > 0 {
			return &exitError{code: spec.ExitUsage}
		}
		return nil
	}
	paths = fuzzPaths
	opts := corpus.GoFuzzOptions{All: *all, MaxElements: *maxElems}
	for _, set := range strings.Split(*targets, ",") {
		if set = strings.TrimSpace(set); set != "" {
			opts.Sets = append(opts.Sets, strings.Split(set, "+"))
		}
	}
	res, err := corpus.ImportGoFuzz(ctx, s, paths, opts)
	if err != nil {
		return withCode(spec.ExitUsage, fmt.Errorf("corpus import: %w", err))
	}
	bad += printGoFuzzImport(stdout, stderr, res, st.dir, bad)
	if bad > 0 {
		return &exitError{code: spec.ExitUsage}
	}
	return nil
}

// importResults imports the findings of the campaign result files
// (bitparity run --json; the .json paths) into s, printing each, and
// returns the other paths (go fuzz inputs or folders of them) and how
// many findings it refused; a result that does not read is a usage error.
func importResults(stdout, stderr io.Writer, s corpus.Store, paths []string) (fuzzPaths []string, bad int, err error) {
	for _, p := range paths {
		if !strings.HasSuffix(p, ".json") {
			fuzzPaths = append(fuzzPaths, p)
			continue
		}
		r, err := corpus.ReadResult(p)
		if err != nil {
			return nil, bad, withCode(spec.ExitUsage, fmt.Errorf("corpus import: %w", err))
		}
		added, existing, errs := corpus.ImportResult(s, r)
		for _, n := range added {
			fmt.Fprintf(stdout, "added %s from %s\n", n, p)
		}
		for _, err := range errs {
			bad++
			fmt.Fprintf(stderr, "refused %s: %v\n", p, err)
		}
		fmt.Fprintf(stdout, "imported %d finding(s) of %s: %d added, %d already there, %d refused\n",
			len(r.Findings), p, len(added), len(existing), len(errs))
	}
	return fuzzPaths, bad, nil
}

// printGoFuzzImport prints one line per go fuzz input imported into dir
// and the counts (refusedBefore: the result files' refused findings), and
// returns how many inputs it refused.
func printGoFuzzImport(stdout, stderr io.Writer, res []corpus.GoFuzzResult, dir string, refusedBefore int) int {
	bad := refusedBefore
	var added, findings int
	for _, r := range res {
		switch {
		case r.Err != nil:
			bad++
			fmt.Fprintf(stderr, "refused %s: %v\n", r.Path, r.Err)
		case r.Name != "" && r.Added:
			added++
			what := "pass case"
			if r.Finding != "" {
				findings++
				what = r.Finding
			}
			fmt.Fprintf(stdout, "added %s (%s) from %s\n", r.Name, what, r.Path)
		case r.Name != "":
			if r.Finding != "" {
				findings++
			}
			fmt.Fprintf(stdout, "have  %s from %s\n", r.Name, r.Path)
		default:
			fmt.Fprintf(stdout, "skipped %s: %s\n", r.Path, r.Skipped)
		}
	}
	fmt.Fprintf(stdout, "imported %d go fuzz input(s) into %s: %d added, %d finding(s), %d refused, %d skipped\n",
		len(res), dir, added, findings, bad, len(res)-added-bad)
	return bad - refusedBefore
}

// goCacheFuzzDir is $GOCACHE/fuzz, where go test -fuzz keeps the inputs it
// generated ($GOCACHE defaults to the user cache dir's go-build).
func goCacheFuzzDir() (string, error) {
	c := os.Getenv("GOCACHE")
	if c == "" {
		uc, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("GOCACHE is not set and there is no user cache dir: %w", err)
		}
		c = filepath.Join(uc, "go-build")
	}
	return filepath.Join(c, "fuzz"), nil
}

func corpusExport(_ context.Context, stdout, stderr io.Writer, st *storeFlags, fs *flag.FlagSet, args []string) error {
	to := fs.String("to", filepath.Join("fuzz", "native", "testdata", "fuzz"), "testdata/fuzz folder to write FuzzX/<hash> entries into")
	if ok, err := parse(fs, args); !ok {
		return err
	}
	s, err := st.open(false)
	if err != nil {
		return err
	}
	entries, err := selectEntries(stderr, s, fs.Args())
	if err != nil {
		return err
	}
	n := 0
	for _, e := range entries {
		p, err := corpus.ExportGoFuzz(e.File, *to)
		if err != nil {
			fmt.Fprintf(stderr, "skipped %s: %v\n", e.Name, err)
			continue
		}
		n++
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	fmt.Fprintf(stdout, "exported %d of %d case(s) to %s (re-run: go test -run 'FuzzX/<hash>' ./fuzz/native)\n", n, len(entries), *to)
	return nil
}
