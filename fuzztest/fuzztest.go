// Package fuzztest lets a team fuzz its own kernel with bitparity's
// relations from its own repository, under go test -fuzz:
//
//	func FuzzMyKernel(f *testing.F) {
//		fuzztest.Fuzz(f, fuzztest.Options{
//			Target:    mykernel.New(),                 // a target.Target, or
//			// Exec:   "python3 my_adapter.py rmsnorm", // a process (docs/protocol.md)
//			Relations: []string{spec.RelBatchInvariance, spec.RelOracleParity},
//		})
//	}
//
//	go test -fuzz=FuzzMyKernel -fuzztime 60s
//
// Each fuzz input is one byte choosing the relation followed by a case in
// the byte format of fuzz/native (which Go's minimizer shrinks): shapes,
// dtypes, value distribution, relation parameters and the seed of the
// values. A case the relation fails on is shrunk with fuzz/shrink to its
// onset, written as a bitparity case file (replay with `bitparity repro
// FILE`) and, while fuzzing, as a seed file under testdata/fuzz so that a
// plain `go test` replays it from then on; the test fails with the minimal
// case, both values as hex, the ulps and the files written.
//
// Without -fuzz, go test runs the seed corpus: a few cases per relation
// drawn by bitparity's generator (fuzz/gen), and the files under
// testdata/fuzz/FuzzMyKernel.
package fuzztest

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/fuzz/native"
	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/internal/gofuzzfile"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/verdict"
)

// Options say what to fuzz. Exactly one of Target and Exec is set; the
// zero value of every other field is valid.
type Options struct {
	// Target is the kernel under test.
	Target target.Target
	// Exec is the command line of an external target (docs/protocol.md),
	// started once per test process and reused.
	Exec string
	// Relations are the relations to check (spec.Rel* names). Empty: every
	// one-target relation of the target's op (batch invariance, padding,
	// oracle parity, determinism), and the two-target ones of the op too
	// when Against is set.
	Relations []string
	// Against is the registered name of the second target of the
	// two-target relations (path parity, logprob parity): e.g.
	// "oracle-attn_decode" for a prefill kernel, or another of your
	// registered targets.
	Against string
	// MaxElements caps a case's input values (spec.Case.Elements); larger
	// decoded cases are skipped so the fuzzer keeps a high rate. 0: 1<<18.
	MaxElements int
	// CorpusDir receives the failing cases as bitparity case files, each
	// as found before shrinking and then replaced by its minimal form
	// (verdict.Recorder); "" is testdata/bitparity, "-" writes none.
	CorpusDir string
	// ShrinkTries bounds the shrinking of a failure (fuzz/shrink); 0: its
	// default.
	ShrinkTries int
	// SeedCases is the number of generated seed cases per relation (0: 4),
	// drawn from Seed.
	SeedCases int
	Seed      uint64
}

// DefaultMaxElements is the case size cap when Options.MaxElements is 0.
const DefaultMaxElements = 1 << 18

var (
	procMu sync.Mutex
	byCmd  = map[string]target.Target{} // Exec command line -> its process target
)

// targetOf returns the target under test: Options.Target itself (never
// registered anywhere: Check takes it as resolved), or the process started
// once per test binary for Options.Exec.
func targetOf(opts Options) (target.Target, error) {
	switch {
	case opts.Target != nil && opts.Exec != "":
		return nil, errors.New("fuzztest: set Target or Exec, not both")
	case opts.Target != nil:
		if opts.Target.Info().Name == "" {
			return nil, errors.New("fuzztest: the target's Info has no Name")
		}
		return opts.Target, nil
	case opts.Exec != "":
		procMu.Lock()
		defer procMu.Unlock()
		if t, ok := byCmd[opts.Exec]; ok {
			return t, nil
		}
		t, err := external.Add(opts.Exec, "", external.Options{Stderr: os.Stderr})
		if err != nil {
			return nil, fmt.Errorf("fuzztest: %w", err)
		}
		byCmd[opts.Exec] = t
		return t, nil
	}
	return nil, errors.New("fuzztest: Options.Target or Options.Exec must be set")
}

// plan is a resolved Options: the target's name and op, and the relations
// with their target lists.
type plan struct {
	opts    Options
	name    string
	op      spec.Op
	rels    []string
	targets map[string][]string        // relation -> Case.Targets
	ts      map[string][]target.Target // relation -> the targets Check takes
	max     int

	mu   sync.Mutex
	done map[string]shrunk // signature of a finding as found -> its minimal case
	rec  *verdict.Recorder // the case files of CorpusDir, opened at the first finding
}

// shrunk is a minimized finding and the files it was written to.
type shrunk struct {
	finding *spec.Finding
	files   []string
}

func newPlan(opts Options) (*plan, error) {
	t, err := targetOf(opts)
	if err != nil {
		return nil, err
	}
	name := t.Info().Name
	p := &plan{opts: opts, name: name, op: t.Info().Op, targets: map[string][]string{},
		ts: map[string][]target.Target{}, max: opts.MaxElements, done: map[string]shrunk{}}
	if p.max <= 0 {
		p.max = DefaultMaxElements
	}
	var against target.Target
	if opts.Against != "" {
		if against, err = target.Lookup(opts.Against); err != nil {
			return nil, fmt.Errorf("fuzztest: Against: %w", err)
		}
	}
	rels := opts.Relations
	explicit := len(rels) > 0
	if !explicit {
		rels = spec.Relations
	}
	for _, rn := range rels {
		r, err := relate.ByName(rn)
		if err != nil {
			return nil, fmt.Errorf("fuzztest: %w", err)
		}
		if !slices.Contains(r.Ops(), p.op) {
			if explicit {
				return nil, fmt.Errorf("fuzztest: relation %s does not apply to op %s", rn, p.op)
			}
			continue
		}
		switch {
		case r.Targets() == 1:
			p.targets[rn], p.ts[rn] = []string{name}, []target.Target{t}
		case opts.Against != "":
			p.targets[rn], p.ts[rn] = []string{name, opts.Against}, []target.Target{t, against}
		case explicit:
			return nil, fmt.Errorf("fuzztest: relation %s compares two targets: set Options.Against", rn)
		default:
			continue
		}
		p.rels = append(p.rels, rn)
	}
	if len(p.rels) == 0 {
		return nil, fmt.Errorf("fuzztest: no relation to run for op %s", p.op)
	}
	return p, nil
}

// input is the fuzz input of case c under relation index i.
func input(i int, c spec.Case) []byte { return append([]byte{byte(i)}, native.Encode(c)...) }

// decode turns a fuzz input into a case, or says why it is skipped.
func (p *plan) decode(data []byte) (spec.Case, string) {
	i := 0
	if len(data) > 0 {
		i, data = int(data[0])%len(p.rels), data[1:]
	}
	rel := p.rels[i]
	c, err := native.Decode(p.op, rel, data)
	if err != nil {
		return c, err.Error()
	}
	if e := c.Elements(); e > p.max {
		return c, fmt.Sprintf("%d input values, above MaxElements %d", e, p.max)
	}
	if !slices.Contains(gen.Dists(), c.Dist) {
		return c, fmt.Sprintf("distribution %s is not derived by this build", c.Dist)
	}
	c.Targets = p.targets[rel]
	return c, ""
}

// seeds are the generated seed inputs: SeedCases per relation.
func (p *plan) seeds() [][]byte {
	n := p.opts.SeedCases
	if n <= 0 {
		n = 4
	}
	var out [][]byte
	for i, rel := range p.rels {
		r := rand.New(rand.NewSource(int64(p.opts.Seed)*7919 + int64(i)))
		for k, tries := 0, 0; k < n && tries < 50*n; tries++ {
			c := gen.Case(r, p.op, rel)
			if c.Elements() > p.max {
				continue
			}
			out = append(out, input(i, c))
			k++
		}
	}
	return out
}

// check runs one case; a finding comes back shrunk, with the files it
// was written to.
func (p *plan) check(ctx context.Context, c spec.Case, fuzzName string) (*spec.Finding, []string, error) {
	ts := p.ts[c.Relation]
	f, err := fuzz.Check(ctx, c, ts...)
	if err != nil || f == nil {
		return nil, nil, err
	}
	// Go's minimizer re-runs a failing input many times: shrink and write
	// each bug (signature) once per process, then point at what was written.
	p.mu.Lock()
	prev, seen := p.done[f.Signature]
	p.mu.Unlock()
	if seen {
		m := *prev.finding
		m.Message = strings.TrimSpace(fmt.Sprintf("%s (the minimal case of an earlier input of this process with the same signature; this input's shape: %+v)",
			m.Message, c.Shape))
		return &m, prev.files, nil
	}
	// the case as found is a case file before shrinking starts, and its
	// minimal form replaces it (verdict.Recorder, as in bitparity run)
	rec, err := p.recorder(fuzzName)
	if err != nil {
		return f, nil, err
	}
	if rec != nil {
		rec.Found(*f)
	}
	m, st, merr := fuzz.Minimize(ctx, f, fuzz.MinimizeOptions{Shrink: shrink.Options{MaxTries: p.opts.ShrinkTries},
		MapBudget: native.MapBudget, Targets: ts})
	if merr != nil {
		m = f // keep the case as found; say why below
		m.Message = strings.TrimSpace(m.Message + " (not shrunk: " + merr.Error() + ")")
	} else if st.Steps > 0 {
		m.Message = strings.TrimSpace(fmt.Sprintf("%s (shrunk in %d steps, %d tries)", m.Message, st.Steps, st.Tried))
	}
	var files []string
	if rec != nil {
		rec.Shrunk(*m)
		if err := rec.Err(); err != nil {
			return m, files, err
		}
		files = append(files, rec.PathOf(*m))
	}
	if fuzzing() {
		i := slices.Index(p.rels, m.Case.Relation)
		path, err := writeSeed(filepath.Join("testdata", "fuzz", fuzzName), "min-"+m.Signature, input(i, m.Case))
		if err != nil {
			return m, files, err
		}
		files = append(files, path)
	}
	p.mu.Lock()
	p.done[f.Signature] = shrunk{m, files}
	p.mu.Unlock()
	return m, files, nil
}

// Fuzz runs the relations of opts on the target under go test (-fuzz): a
// seed corpus without -fuzz, the fuzzer's inputs with it. A failure is
// shrunk, written (CorpusDir, and testdata/fuzz/NAME while fuzzing) and
// reported with t.Fatal; a case too large for MaxElements, or one the
// target declines (external.ErrUnsupported), is skipped; any other error
// of the target fails the test.
func Fuzz(f *testing.F, opts Options) {
	f.Helper()
	p, err := newPlan(opts)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range p.seeds() {
		f.Add(s)
	}
	name := f.Name()
	f.Fuzz(func(t *testing.T, data []byte) {
		c, skip := p.decode(data)
		if skip != "" {
			t.Skip(skip)
		}
		m, files, err := p.check(context.Background(), c, name)
		if errors.Is(err, external.ErrUnsupported) {
			t.Skip(err)
		}
		if m != nil {
			t.Fatal(report(m, files, name))
		}
		if err != nil {
			t.Fatalf("%s on %s: %v", c.Relation, strings.Join(c.Targets, ", "), err)
		}
	})
}

// Search checks n generated cases per relation of opts (drawn from seed
// with bitparity's generator, as a campaign would) and returns the first
// finding, shrunk and written like Fuzz's, or nil when every case holds.
// It is Fuzz without the fuzzer: for plain tests, negative controls and
// CI jobs that want a fixed budget.
func Search(ctx context.Context, opts Options, seed uint64, n int) (*spec.Finding, error) {
	opts.Seed, opts.SeedCases = seed, n
	p, err := newPlan(opts)
	if err != nil {
		return nil, err
	}
	for _, in := range p.seeds() {
		c, skip := p.decode(in)
		if skip != "" {
			continue
		}
		m, _, err := p.check(ctx, c, "Search")
		if m != nil || (err != nil && !errors.Is(err, external.ErrUnsupported)) {
			return m, err
		}
	}
	return nil, nil
}

func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// report is the failure message: what differs, the minimal case, the
// repro line and the files written.
func report(f *spec.Finding, files []string, fuzzName string) string {
	var b strings.Builder
	b.WriteString("bitparity: " + words.Finding(*f) + "\n")
	js, err := json.MarshalIndent(f.Case, "", "  ")
	if err != nil {
		js = []byte(err.Error())
	}
	fmt.Fprintf(&b, "minimal case:\n%s\n", js)
	fmt.Fprintf(&b, "repro: %s\n", f.Repro)
	for _, path := range files {
		fmt.Fprintf(&b, "written: %s\n", path)
		if strings.Contains(path, filepath.Join("testdata", "fuzz")) {
			fmt.Fprintf(&b, "re-run: go test -run %s .\n", spec.ShellQuote(fuzzName+"/"+filepath.Base(path)))
		}
	}
	return b.String()
}

// recorder opens CorpusDir ("" is testdata/bitparity) for the case files
// of source's findings at its first use; nil for CorpusDir "-".
func (p *plan) recorder(source string) (*verdict.Recorder, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	dir := p.opts.CorpusDir
	if p.rec != nil || dir == "-" {
		return p.rec, nil
	}
	if dir == "" {
		dir = filepath.Join("testdata", "bitparity")
	}
	d, err := corpus.OpenDir(dir, true)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	head := spec.Result{Version: spec.ResultVersion, Env: spec.HostEnv()}
	if p.rec, err = verdict.NewRecorder(verdict.RecorderOptions{Store: d, Where: dir, Head: head, Source: "go test " + source}); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	return p.rec, nil
}

// writeSeed writes a go test fuzz v1 seed file atomically.
func writeSeed(dir, name string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("seed file: %w", err)
	}
	path := filepath.Join(dir, name)
	b, err := gofuzzfile.Format(data)
	if err != nil {
		return "", fmt.Errorf("seed file: %w", err)
	}
	if err := atomicfile.Write(path, b); err != nil {
		return "", fmt.Errorf("seed file: %w", err)
	}
	return path, nil
}
