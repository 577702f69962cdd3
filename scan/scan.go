// Package scan sweeps one dimension of a target's batches over every value
// of a range (the items of a batch 1..N, padding to each size, the watched
// item at each position, the KV length 1..N) and compares every row of
// every batch with its references. Its answer is a certificate (no row
// differed: spec.Certificate) or the exact drift map of every value, never
// a sample.
//
// For each input draw (one per distribution in the spec), a scan
// generates the largest batch once, holds it where the target computes
// (a GPU target keeps it resident on the device: held), and for every
// value v of the range:
//
//	batch   the items the dimension takes for v (a prefix, the batch padded
//	        to v, the watched item moved to position v, the KV cut to v)
//	run     the target on that batch, every row
//	compare every compared row with the same item computed alone (a batch
//	        of one item) and with the same item in the reference batch
//	        (the largest batch; the real items unpadded; the identity order),
//	        output bits in the compare dtype and the fp32 taps
//	          (the KV dimension: with the oracle of the declared schedule)
//	class   items: the bits of a panel of the first 64 items computed in
//	        batches of v (itemsClass), a function of the schedule chosen
//	        for v items; pad: the bits of the real items; position:
//	        whether any item differs from its place in the reference batch
//	        (and the watched item's bits); kv: whether a row differs from
//	        the oracle
//
// Two values share a class when their rows agree on every row they
// share, over every draw (classes.go), so the map is never coarser than
// any draw shows, and an onset hidden by rows that cannot show the change
// is pinned on further draws.
// A step that differs runs again; a value whose step the target answers
// two ways is nondeterministic, a class of its own and a drift like any
// other (determinism.go).
package scan

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Options tune a scan; the zero value is valid.
type Options struct {
	// Progress, when set, is called after every step (one value of one
	// draw) with the steps done and the total.
	Progress func(done, total int)
	// Env is the environment a certificate records (zero: spec.HostEnv()).
	Env spec.Env
	// Before, when set, is called before each batch a draw runs on the
	// target, with the draw and the step in words: "items alone", "the
	// reference batch, rows = 8192", "rows = 17". A scan in a worker
	// subprocess reports it, so a fault or hang names its step.
	Before func(draw spec.Dist, step string)
	// Kernel is the user kernel a scan of kernel:NAME runs in a worker
	// (LoadKernel); a scan of any other target leaves it nil.
	Kernel *Kernel
	// SaveInputs, when set, is a folder a path scan writes each draw's
	// inputs under before it runs (saveInputs), for an independent sweep
	// of the same tensors; other scans refuse it.
	SaveInputs string
	// perStep runs every step through the per-step path, never the bulk
	// check (tests compare the two).
	perStep bool
}

// before calls opt.Before for draw k's step.
func (sc *scanner) before(k int, format string, a ...any) {
	if sc.opt.Before != nil {
		sc.opt.Before(sc.draws[k], fmt.Sprintf(format, a...))
	}
}

// Result is what a scan found.
type Result struct {
	Spec spec.ScanSpec
	// Certificate is set when no compared row differed, Map always: the
	// class of every value swept (one class when certified).
	Certificate *spec.Certificate
	Map         *spec.DriftMap
	// Diffs lists, per draw and value with a differing row, what differed.
	Diffs        []Diff
	Batches      int64
	RowsCompared int64
	Differing    int64
	Elapsed      time.Duration
	// Resident says the inputs stayed on the target's device.
	Resident bool
	// Power is the power of the draws (nil: no power was asked for, or the
	// op has no family): the share of the family of reduction orders each
	// position shows in at least one draw.
	Power *spec.Power
	// Draws are the distributions of the draws run: the spec's, then the
	// sensitive draws added until the power reached its target.
	Draws []spec.Dist
	// Onsets lists the onsets pinned on further draws (classes.go).
	Onsets []Onset `json:",omitempty"`
	// Differ lists the KV lengths where the two paths of a path scan
	// differ on some draw, ascending (Differing counts them: a path scan
	// counts no rows).
	Differ []int `json:",omitempty"`
	// Fault is set when a user kernel faulted or hung on a batch (its
	// worker's scan ended there): a finding, with no map.
	Fault *Fault `json:",omitempty"`
}

// Diff is one step with differing rows.
type Diff struct {
	Draw  spec.Dist
	Value int
	// Rows is the number of differing rows, FirstRow the first (a row of
	// the scanned batch), Against the reference it differs from: "item
	// alone", "largest batch" (the reference batch), "other rows
	// replaced", "oracle" or "same batch run again" (a step the target
	// answered two ways); Words how they differ in the op's words (an op
	// package's target's scan, ops.go).
	Rows     int
	FirstRow int
	Against  string
	Words    string
}

// Run scans s, whatever its subject (subject.go picks the loop from the
// spec: a registered target, two attention paths, a model route, an op
// package's target or a user kernel). A user kernel's scan that faults or
// hangs is a Result with Fault set, not an error; an error wrapping
// ErrBadSpec is bad input.
func Run(ctx context.Context, s spec.ScanSpec, opt Options) (*Result, error) {
	sc, err := newScanner(s, opt)
	if err != nil {
		return nil, err
	}
	return sc.scan(ctx)
}

// Check reports whether s can run here: its spec is good, its target
// exists and runs its op, and its largest batch fits the input budget. It
// runs nothing. A user kernel's scan is checked with its Options.Kernel
// (Expand).
func Check(s spec.ScanSpec) error {
	_, err := newScanner(s, Options{})
	return err
}

// scanner is one scan: its spec, its subject's target and what it has
// found so far. Every subject is one scanner; its loop is one method
// (scanner.scan picks it).
type scanner struct {
	s       spec.ScanSpec
	subject subject
	opt     Options
	t       target.Target // held: the target; path: the prefill
	dt      oracle.DType
	res     *Result
	done    int
	total   int
	values  []int
	// classes[k][i] is the class of values[i] on draw k.
	classes [][]string
	// moved[v] are the items of value v's batch that differ from
	// themselves alone on any draw (the items dimension).
	moved map[int]driftmap.Positions
	ident []int // 0..To-1, shared by the plans
	// draws are the distributions of the draws run so far: the spec's,
	// then the sensitive draws the power loop adds; draw k has seed
	// Seed+k.
	draws []spec.Dist
	// cov is the power of the draws so far (nil: the op has no family);
	// batch is the last draw's largest batch when its rows are on the host.
	cov   *power.Coverage
	batch *target.Batch
	// ahead is the next draw's batch, made on the host while a draw runs
	// (ahead.go); nil when none is.
	ahead *aheadBatch

	dec   target.Target   // path: the decode
	procs *pathProcs      // path: the adapters' processes (paths_procs.go)
	route *external.Model // model: the route
	op    ops.Target      // op: the op package's target
}

// newHeld fills sc for s, a scan of a registered target.
func (sc *scanner) newHeld(s spec.ScanSpec) error {
	t, err := target.Lookup(s.Target)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	if s.Op == "" {
		s.Op = t.Info().Op
	}
	if op := t.Info().Op; op != s.Op {
		return fmt.Errorf("%w: target %s runs %s, the scan asks for %s", ErrBadSpec, s.Target, op, s.Op)
	}
	if s, err = Normalize(s); err != nil {
		return err
	}
	if (s.Dim == spec.ScanChunk || s.Dim == spec.ScanPage || s.Dim == spec.ScanPrefix) && !t.Info().Layouts {
		return fmt.Errorf("%w: the %s dimension needs a target that reads the batch's layout (a chunked prefill, a paged decode's page size); %s does not, and would run every value alike", ErrBadSpec, s.Dim, s.Target)
	}
	dt, err := oracle.ParseDType(string(s.Out))
	if err != nil {
		return fmt.Errorf("%w: output dtype: %w", ErrBadSpec, err)
	}
	if k, ok := all.Case(s.Op); ok {
		dt = k.OutDType(dt) // log-probs: fp32
	}
	sc.s, sc.t, sc.dt = s, t, dt
	return nil
}

// checkHeld sets up the power of a held scan and checks that the first
// draw's largest batch can be made: a shape error is bad input before
// anything runs. The check makes no values (inputs.Check): each draw
// makes its own batch, on the device where the target can.
func (sc *scanner) checkHeld() error {
	if sc.s.Power > 0 {
		f, err := inputs.Family(sc.caseFor(0))
		if err != nil {
			return fmt.Errorf("%w: power: %w", ErrBadSpec, err)
		}
		sc.cov = power.NewCoverage(f, sc.refItems())
	}
	if err := inputs.Check(sc.caseFor(0)); err != nil {
		return fmt.Errorf("%w: inputs: %w", ErrBadSpec, err)
	}
	return nil
}

// runHeld is the held loop: it scans every draw, then builds the map
// and, when nothing differed, the certificate.
func (sc *scanner) runHeld(ctx context.Context) (*Result, error) {
	start := time.Now()
	for k := 0; k < len(sc.draws); k++ {
		cls, err := sc.draw(ctx, k)
		if err != nil {
			return nil, err
		}
		sc.classes = append(sc.classes, cls)
		if err := sc.addPower(k); err != nil {
			return nil, err
		}
		if k == len(sc.draws)-1 && sc.morePower() {
			sc.draws = append(sc.draws, spec.DistSensitive)
			sc.total += len(sc.values)
		}
	}
	keys, err := sc.pin(ctx, sc.keys())
	if err != nil {
		return nil, err
	}
	classify := func(v int) (string, error) {
		i, ok := slices.BinarySearch(sc.values, v)
		if !ok {
			return "", fmt.Errorf("value %d was not scanned", v)
		}
		return hashKey(keys[i]), nil
	}
	m, err := driftmap.Options{Runs: 1}.Sweep(ctx, mapDim(sc.s), sc.values, classify) // each value ran once: its class is looked up
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	m.Draws = len(sc.classes)
	r := sc.res
	r.Map = m
	r.Draws = sc.draws
	m.Note = sc.positionsNote(m, keys)
	r.Elapsed = time.Since(start)
	if sc.cov != nil {
		p := sc.cov.Summary(sc.s.Power)
		r.Power = &p
	}
	if r.Differing == 0 {
		r.Certificate = sc.certificate()
	}
	return r, nil
}

// caseFor is the case whose batch is draw k's largest batch.
func (sc *scanner) caseFor(k int) spec.Case {
	s := sc.s
	c := spec.Case{Version: spec.CaseVersion, GenVersion: s.GenVersion, Op: s.Op, Relation: spec.RelBatchInvariance,
		Targets: []string{s.Target}, Shape: s.Shape, In: s.In, Out: s.Out, Eps: s.Eps, Dist: sc.draws[k],
		Seed: s.Seed + uint64(k)}
	if c.Dist == spec.DistSensitive {
		for j := k; j >= 0 && sc.draws[j] == spec.DistSensitive; j-- {
			c.Draw++ // the chain of sensitive draws ending at k (fuzz: targeted draws)
		}
	}
	items := s.To
	switch s.Dim {
	case spec.ScanPad:
		items = s.Real
	case spec.ScanKV:
		items = c.BatchRows()
		c.Shape.KV, c.Shape.KVLens = s.To, nil
	case spec.ScanNeighbour, spec.ScanChunk, spec.ScanPage, spec.ScanPrefix:
		sc.attnCase(&c)
		return c
	}
	c.SetBatchRows(items)
	return c
}

// mapDim names the swept dimension in the map: the items of a batch are
// rows (rmsnorm, gemm, logprob), batch (decode requests) or seqs
// (prefill sequences), as in the campaign's drift maps.
func mapDim(s spec.ScanSpec) string {
	if s.Dim != spec.ScanItems {
		return s.Dim
	}
	return s.Op.ItemsWord()
}
