package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

// Environment variables mirroring the corpus flags.
const (
	envCorpus = "BITPARITY_CORPUS"        // -dir
	envShared = "BITPARITY_SHARED_CORPUS" // -shared, a list separated by the OS path list separator
)

// subcommand is one corpus subcommand: its summary and arguments (the
// usage), the positional arguments it takes, the corpus corpusCmd opens
// for it after the flags parse, and flags, which defines its flags on fs
// and returns the run that reads them.
type subcommand struct {
	summary, usage string
	args           arity
	store          storeUse
	flags          func(fs *flag.FlagSet) func(c *corpusRun) error
}

// arity is how many positional arguments a subcommand takes.
type arity int

const (
	anyArgs  arity = iota
	dirArg         // at most one, the corpus folder (storeFlags.dirArg)
	oneArg         // exactly one
	someArgs       // one or more
)

// storeUse is the corpus corpusCmd opens for a subcommand (storeFlags.open).
type storeUse int

const (
	ownStore    storeUse = iota // none: the subcommand opens it when it is ready to
	readStore                   // the corpus as it is
	createStore                 // the corpus, its folder created when missing
)

// corpusRun is one run of a corpus subcommand.
type corpusRun struct {
	ctx            context.Context
	stdout, stderr io.Writer
	st             *storeFlags
	fs             *flag.FlagSet
	s              *corpus.Layered // the store, unless the subcommand's is ownStore
}

var corpusSubs = map[string]subcommand{
	"ls":       {"list the cases: name, status, op, relation, targets, finding", "[DIR]", dirArg, readStore, corpusLs},
	"show":     {"print one case file in words (or -json)", "NAME|FILE", oneArg, ownStore, corpusShow},
	"merge":    {"copy the cases of other corpus folders into the local one", "DIR...", someArgs, createStore, corpusMerge},
	"dedup":    {"keep one case per finding signature, delete the others (-n: only say)", "[DIR]", dirArg, readStore, corpusDedup},
	"minimize": {"shrink a finding's case again with fuzz/shrink and store the result", "NAME|FILE...", someArgs, createStore, corpusMinimize},
	"import":   {"turn go test -fuzz inputs (testdata/fuzz/FuzzX/*, $GOCACHE/fuzz/...) and run --json results into cases", "PATH...", anyArgs, ownStore, corpusImport},
	"export":   {"write cases as go test -fuzz corpus entries under -to", "[NAME|FILE...]", anyArgs, readStore, corpusExport},
	"bundle":   {"write cases as a tar.gz with a manifest and checksums (-o FILE)", "[NAME...]", anyArgs, readStore, corpusBundle},
	"unbundle": {"validate a bundle and store every good case; report each bad one", "FILE", oneArg, ownStore, corpusUnbundle},
	"recheck":  {"replay every open finding and every unbundled case not yet replayed here (-all: every case), mark those that no longer reproduce fixed; rerun every valid certificate's scan and every open scan drift's", "[DIR]", dirArg, readStore, corpusRecheck},
}

func corpusUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: bitparity corpus SUBCOMMAND [flags] [args]")
	fmt.Fprintln(w, "\nsubcommands:")
	for _, n := range slices.Sorted(maps.Keys(corpusSubs)) {
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

// corpusCmd is `bitparity corpus SUBCOMMAND`: it parses the subcommand's
// flags, checks its arguments, opens its store and runs it.
func corpusCmd(stdout, stderr io.Writer, args []string) error {
	sub, done, err := lookupCommand(stdout, stderr, args, corpusSubs, corpusUsage, "corpus: unknown subcommand")
	if done {
		return err
	}
	usage := fmt.Sprintf("usage: bitparity corpus %s [flags] %s\n%s", args[0], sub.usage, sub.summary)
	c := &corpusRun{stdout: stdout, stderr: stderr, st: &storeFlags{}, fs: newFlagSet("corpus "+args[0], stderr, usage)}
	c.fs.StringVar(&c.st.dir, "dir", defaultDir(), "local corpus folder or bucket URL (written); $"+envCorpus)
	c.fs.Var(&c.st.shared, "shared", "shared corpus folder or bucket URL (s3://, gs://, azblob://, file://), read only (repeatable); $"+envShared)
	run := sub.flags(c.fs)
	if ok, err := parse(c.fs, args[1:]); !ok {
		return err
	}
	n := c.fs.NArg()
	switch {
	case sub.args == dirArg:
		if err := c.st.dirArg(c.fs); err != nil {
			return err
		}
	case sub.args == oneArg && n != 1, sub.args == someArgs && n == 0:
		return usageErr("%s: want %s", c.fs.Name(), sub.usage)
	}
	if sub.store != ownStore {
		var err error
		if c.s, err = c.st.open(sub.store == createStore); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c.ctx = ctx
	return run(c)
}

// selectEntries returns the cases named by the arguments, or every case
// of the store when there are none (corpus.Select), warning on stderr
// about files that do not decode; a name or file that does not resolve
// is a usage error.
func (c *corpusRun) selectEntries() ([]corpus.Entry, error) {
	entries, bad, err := corpus.Select(c.s, c.fs.Args())
	for _, err := range bad {
		fmt.Fprintln(c.stderr, "warning:", err)
	}
	return entries, withCode(spec.ExitUsage, err)
}

func corpusLs(fs *flag.FlagSet) func(c *corpusRun) error {
	asJSON := fs.Bool("json", false, "print one JSON object per line: name, status, signature, case")
	return func(c *corpusRun) error {
		bad := corpus.WriteList(c.stdout, c.stderr, c.s, *asJSON)
		if d, ok := c.s.Local.(*corpus.Dir); ok && !*asJSON { // certificates and scan drifts live in folders (scan.go, scan_results.go)
			scan.ListCertificates(c.stdout, c.stderr, d)
			scan.ListDrifts(c.stdout, c.stderr, d)
		}
		if bad > 0 {
			return withCode(spec.ExitUsage, fmt.Errorf("corpus ls: %d unreadable file(s)", bad))
		}
		return nil
	}
}

func corpusShow(fs *flag.FlagSet) func(c *corpusRun) error {
	asJSON := fs.Bool("json", false, "print the case file itself (canonical JSON)")
	return func(c *corpusRun) error {
		if ok, err := scan.ShowCertificate(c.stdout, c.st.dir, fs.Arg(0), *asJSON); ok {
			return withCode(spec.ExitUsage, err) // an unreadable certificate is bad input
		}
		s, err := c.st.open(false)
		if st, ferr := os.Stat(fs.Arg(0)); err != nil && (ferr != nil || st.IsDir()) {
			return err // a case file's path needs no corpus folder (corpus.Resolve)
		}
		e, err := corpus.Resolve(s, fs.Arg(0))
		if err != nil {
			return withCode(spec.ExitUsage, err)
		}
		if !*asJSON {
			_, err = fmt.Fprint(c.stdout, e.Words())
			return err
		}
		b, err := corpus.Encode(e.File)
		if err == nil {
			_, err = c.stdout.Write(b)
		}
		return err
	}
}

func corpusMerge(*flag.FlagSet) func(c *corpusRun) error {
	return func(c *corpusRun) error {
		srcs, err := corpus.OpenAll(context.Background(), c.fs.Args())
		if err != nil {
			return withCode(spec.ExitUsage, err)
		}
		rep, err := corpus.Merge(c.s, srcs...)
		if err != nil {
			return err
		}
		rep.Write(c.stdout, c.stderr, c.st.dir)
		if len(rep.Bad) > 0 {
			return &exitError{code: spec.ExitUsage}
		}
		return nil
	}
}

func corpusDedup(fs *flag.FlagSet) func(c *corpusRun) error {
	dry := fs.Bool("n", false, "only print what would be deleted")
	return func(c *corpusRun) error {
		corpus.DedupStore(c.s, *dry, c.stdout, c.stderr)
		return nil
	}
}

func corpusMinimize(fs *flag.FlagSet) func(c *corpusRun) error {
	tries := fs.Int("max-tries", 0, "bound the fuzz.Check calls per case (0: the shrinker's default)")
	keep := fs.Bool("keep", false, "keep the original case file (default: delete it from the local corpus)")
	return func(c *corpusRun) error {
		entries, err := c.selectEntries()
		if err != nil {
			return err
		}
		err = corpus.MinimizeAll(c.ctx, c.s, entries, shrink.Options{MaxTries: *tries}, *keep, c.stdout, c.stderr, scan.Checkers()...)
		if errors.Is(err, corpus.ErrNoFinding) || errors.Is(err, corpus.ErrModelCase) {
			return usageErr("corpus minimize: %w", err)
		}
		return err
	}
}

func corpusBundle(fs *flag.FlagSet) func(c *corpusRun) error {
	out := fs.String("o", "", "bundle file to write (.tar.gz); required")
	open := fs.Bool("open", false, "only open findings")
	return func(c *corpusRun) error {
		if *out == "" {
			return usageErr("corpus bundle: -o FILE is required")
		}
		if fi, err := os.Stat(filepath.Dir(*out)); err != nil || !fi.IsDir() {
			return usageErr("corpus bundle: -o %s: its folder does not exist", *out)
		}
		entries, err := c.selectEntries()
		if err != nil {
			return err
		}
		if *open {
			entries = corpus.OpenOnly(entries)
		}
		m, size, err := corpus.WriteBundleFile(*out, entries)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "wrote %s: %d case(s), %d bytes\n", *out, len(m.Files), size)
		return nil
	}
}

func corpusUnbundle(*flag.FlagSet) func(c *corpusRun) error {
	return func(c *corpusRun) error {
		fh, err := os.Open(c.fs.Arg(0))
		if err != nil {
			return withCode(spec.ExitUsage, err)
		}
		defer fh.Close()
		s, err := c.st.open(true)
		if err != nil {
			return err
		}
		rep, err := corpus.Unbundle(fh, s)
		rep.Write(c.stdout, c.stderr, c.fs.Arg(0), c.st.dir)
		if err != nil {
			return withCode(spec.ExitUsage, err)
		}
		if len(rep.Bad) > 0 {
			return withCode(spec.ExitUsage, fmt.Errorf("corpus unbundle: %d member(s) refused; the others were stored", len(rep.Bad)))
		}
		return nil
	}
}

// corpusRecheck replays the cases corpus.Rechecks selects (-all: every
// one). It exits 1 when a finding still reproduces or fails again, a pass
// case finds something, a crash is flaky (corpus.Flaky: it did not show on
// every replay, and stays open) or a certificate no longer holds, 3 when a
// case or scan could not be run here, 0 when every finding replayed is
// fixed, every pass case passes and every certificate holds.
func corpusRecheck(fs *flag.FlagSet) func(c *corpusRun) error {
	kernel := fs.String("kernel-hash", "", "kernel or PTX hash of the build under test, recorded on the cases it fixes")
	ex := runExecFlags(fs) // --exec: the adapters of cases on exec: targets
	kernels := fs.String("kernel", "", "rerun the certificates of the user kernel of this manifest (comma-separated for several), matched by its name")
	fromCert := fs.Bool("kernel-from-certificate", false, "rerun each user kernel's certificate with the manifest path it records (the code that path names runs on the GPU: read it first)")
	all := fs.Bool("all", false, "replay every case, fixed findings and pass cases too (default: open findings, and every case unbundled from another corpus that no recheck here has replayed)")
	kpaths := kernelPathFlag(fs)
	return func(c *corpusRun) error {
		kr, err := newKernelRecheck(*kernels, *fromCert, *kpaths)
		if err != nil {
			return err
		}
		if _, err := ex.start(c.ctx, "corpus recheck"); err != nil {
			return err
		}
		defer external.CloseAll()
		missing, err := verdict.MissingAdapters(c.s, *all) // a recheck without an adapter cannot tell fixed from not run
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			return usageErr("corpus recheck: %d case(s) need an adapter; nothing was rechecked:\n  %s", len(missing), strings.Join(missing, "\n  "))
		}
		env := gpu.HereEnv()
		if *kernel != "" {
			env.KernelHash = *kernel
		}
		res, err := corpus.Recheck(c.ctx, c.s, env, *all, scan.Checkers()...)
		if err != nil {
			return err
		}
		failing, broken := corpus.WriteRecheck(c.stdout, res)
		if d, ok := c.s.Local.(*corpus.Dir); ok { // certificates and scan drifts live in corpus folders
			sfailing, sbroken, err := scan.RecheckAll(c.ctx, c.stdout, d, env, kr)
			if err != nil {
				return err
			}
			failing, broken = failing+sfailing, broken+sbroken
		}
		switch {
		case failing > 0:
			return &exitError{code: spec.ExitFinding}
		case broken > 0:
			return &exitError{code: spec.ExitInternal}
		}
		return nil
	}
}

func corpusImport(fs *flag.FlagSet) func(c *corpusRun) error {
	gocache := fs.Bool("gocache", false, "also import the generated corpus of every native target under $GOCACHE/fuzz")
	targets := fs.String("targets", "", "target sets to run each input against, comma-separated, two-target sets joined by '+' (default: the native targets' own sets, with $BITPARITY_FUZZ_TARGETS)")
	all := fs.Bool("all", false, "also store inputs that find nothing, as cases that must pass")
	maxElems := fs.Int("max-elements", spec.MaxElements, "skip inputs whose case needs more input values")
	return func(c *corpusRun) error {
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
		s, err := c.st.open(true)
		if err != nil {
			return err
		}
		opts := corpus.GoFuzzOptions{All: *all, MaxElements: *maxElems, Sets: corpus.ParseSets(*targets)}
		bad, err := corpus.Import(c.ctx, s, c.st.dir, paths, opts, c.stdout, c.stderr)
		if err != nil {
			return withCode(spec.ExitUsage, fmt.Errorf("corpus import: %w", err))
		}
		if bad > 0 {
			return &exitError{code: spec.ExitUsage}
		}
		return nil
	}
}

func corpusExport(fs *flag.FlagSet) func(c *corpusRun) error {
	to := fs.String("to", filepath.Join("fuzz", "native", "testdata", "fuzz"), "testdata/fuzz folder to write FuzzX/<hash> entries into")
	return func(c *corpusRun) error {
		entries, err := c.selectEntries()
		if err == nil {
			corpus.ExportAll(entries, *to, c.stdout, c.stderr)
		}
		return err
	}
}
