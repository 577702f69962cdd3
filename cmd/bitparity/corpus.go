package main

import (
	"context"
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

// open returns the layered store (corpus.OpenLayered): the local folder
// or bucket (a folder is created when create) over the shared read-only
// ones, -shared or else $BITPARITY_SHARED_CORPUS.
func (s *storeFlags) open(create bool) (*corpus.Layered, error) {
	shared := []string(s.shared)
	if v := os.Getenv(envShared); len(shared) == 0 && v != "" {
		shared = filepath.SplitList(v)
	}
	l, err := corpus.OpenLayered(context.Background(), s.dir, shared, create)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usageErr("%v (name a corpus folder with -dir DIR or $%s; bitparity run --corpus DIR stores a campaign's findings in one)", err, envCorpus)
	}
	return l, withCode(spec.ExitUsage, err)
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

// selectEntries returns the cases named by args, or every case of s when
// args is empty (corpus.Select), warning on stderr about files that do
// not decode; a name or file that does not resolve is a usage error.
func selectEntries(stderr io.Writer, s corpus.Store, args []string) ([]corpus.Entry, error) {
	entries, bad, err := corpus.Select(s, args)
	warnAll(stderr, bad)
	return entries, withCode(spec.ExitUsage, err)
}

func warnAll(stderr io.Writer, errs []error) {
	for _, err := range errs {
		fmt.Fprintln(stderr, "warning:", err)
	}
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
		if *asJSON {
			fmt.Fprintln(stdout, string(e.JSON()))
		} else {
			fmt.Fprintln(stdout, e.Line())
		}
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
	e, err := corpus.Resolve(s, fs.Arg(0))
	if err != nil {
		return withCode(spec.ExitUsage, err)
	}
	if !*asJSON {
		_, err = fmt.Fprint(stdout, e.Words())
		return err
	}
	b, err := corpus.Encode(e.File)
	if err == nil {
		_, err = stdout.Write(b)
	}
	return err
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
	corpus.DedupStore(s, *dry, stdout, stderr)
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
	entries, err := selectEntries(stderr, s, fs.Args())
	if err != nil {
		return err
	}
	for _, e := range entries {
		g, stats, err := corpus.Minimize(ctx, e.File, shrink.Options{MaxTries: *tries})
		if errors.Is(err, corpus.ErrNoFinding) || errors.Is(err, corpus.ErrModelCase) {
			return usageErr("corpus minimize: %s: %v", e.Name, err)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		newName, _, err := s.Put(g)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s -> %s: %s -> %s (%d steps, %d tries, %s)\n", e.Name, newName,
			words.Case(e.File.Case), words.Case(g.Case), stats.Steps, stats.Tried, stats.Elapsed.Round(time.Millisecond))
		if !*keep && newName != e.Name {
			if err := s.Delete(e.Name); err != nil && !errors.Is(err, corpus.ErrNotFound) {
				fmt.Fprintf(stderr, "warning: kept %s: %v\n", e.Name, err)
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
		entries = corpus.OpenOnly(entries)
	}
	if fi, err := os.Stat(filepath.Dir(*out)); err != nil || !fi.IsDir() {
		return usageErr("corpus bundle: -o %s: its folder does not exist", *out)
	}
	m, size, err := corpus.WriteBundleFile(*out, entries)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d case(s), %d bytes\n", *out, len(m.Files), size)
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
	rep.Write(stdout, stderr, fs.Arg(0), st.dir)
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
	failing, broken := corpus.WriteRecheck(stdout, res)
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
		dir, err := corpus.GoCacheFuzzDir()
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
	opts := corpus.GoFuzzOptions{All: *all, MaxElements: *maxElems}
	for _, set := range strings.Split(*targets, ",") {
		if set = strings.TrimSpace(set); set != "" {
			opts.Sets = append(opts.Sets, strings.Split(set, "+"))
		}
	}
	bad, err := corpus.Import(ctx, s, st.dir, paths, opts, stdout, stderr)
	if err != nil {
		return withCode(spec.ExitUsage, fmt.Errorf("corpus import: %w", err))
	}
	if bad > 0 {
		return &exitError{code: spec.ExitUsage}
	}
	return nil
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
