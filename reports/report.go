package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
)

// Version is the version of the JSON report schema (docs/report-schema.md).
const Version = 1

// Finding statuses across nights.
const (
	// StatusNew: failing tonight, seen on no earlier night.
	StatusNew = "new"
	// StatusStillFailing: failing tonight and on an earlier night.
	StatusStillFailing = "still_failing"
	// StatusFixed: failing on the previous night, not tonight, and a
	// recheck of its case passed (a corpus case of the same identity
	// marked fixed by `corpus recheck`; Options.Fixed).
	StatusFixed = "fixed"
	// StatusNotSeen: failing on the previous night, not tonight although
	// tonight's campaign ran the finding's target, and no recheck has
	// shown it fixed: a campaign draws random cases, so not finding a bug
	// one night says little.
	StatusNotSeen = "not_seen"
	// StatusNotRerun: failing on the previous night; tonight's campaign did
	// not run its target, so nothing is known.
	StatusNotRerun = "not_rerun"
)

// Cell statuses.
const (
	CellPass   = "pass"    // the target ran and nothing was found
	CellFail   = "fail"    // a mismatch or misuse finding
	CellCrash  = "crash"   // the target crashed, hung or answered garbage
	CellNotRun = "not_run" // the target is listed but ran no case
	// CellExpected: every finding of the cell is an expected one, on a
	// negative control (see Entry.Expected).
	CellExpected = "expected"
	// CellInterrupted: the campaign was interrupted (spec.Result's
	// Interrupted) and the cell found nothing in the cases it ran, or ran
	// none: not a pass.
	CellInterrupted = "interrupted"
)

// Report is the JSON report (schema in docs/report-schema.md). Inputs and
// Trend are ordered by start time; the last input is tonight.
type Report struct {
	Version   int       `json:"version"`
	Generated time.Time `json:"generated"`
	Inputs    []Input   `json:"inputs"`
	Summary   Summary   `json:"summary"`
	Cells     []Cell    `json:"cells"`
	Findings  []Entry   `json:"findings"`
	Trend     []Night   `json:"trend"`
}

// Input describes one result file.
type Input struct {
	Path     string        `json:"path"`
	Started  time.Time     `json:"started"`
	Duration spec.Duration `json:"duration"`
	Seed     uint64        `json:"seed"`
	Cases    int64         `json:"cases"`
	Findings int           `json:"findings"`
	Env      spec.Env      `json:"env"`
	Args     []string      `json:"args,omitempty"`
	// Interrupted is the result's Interrupted: a signal stopped the
	// campaign before its end.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Summary counts tonight's campaign.
type Summary struct {
	Started      time.Time     `json:"started"`
	Duration     spec.Duration `json:"duration"`
	Cases        int64         `json:"cases"`
	Targets      int           `json:"targets"`
	Cells        int           `json:"cells"`
	CellsFailing int           `json:"cells_failing"`
	Findings     int           `json:"findings"`
	// Interrupted is set when tonight's campaign was interrupted: its
	// counts cover the cases it ran and no cell of it is a pass.
	Interrupted bool `json:"interrupted,omitempty"`
	// Expected counts tonight's findings on negative controls, Unexpected
	// the others, and NewUnexpected the new ones among those.
	Expected      int `json:"expected"`
	Unexpected    int `json:"unexpected"`
	NewUnexpected int `json:"new_unexpected"`
	New           int `json:"new"`
	StillFailing  int `json:"still_failing"`
	Fixed         int `json:"fixed"`
	NotSeen       int `json:"not_seen"`
	NotRerun      int `json:"not_rerun"`
}

// Cell is one op x relation x target of tonight's campaign.
type Cell struct {
	Op        spec.Op `json:"op"`
	Relation  string  `json:"relation"`
	Target    string  `json:"target"`
	Invariant bool    `json:"invariant"`
	Status    string  `json:"status"`
	// Cases is the number of cases the target ran (all its relations).
	Cases int64 `json:"cases"`
	// Findings lists the identities (spec.Identity) of tonight's findings
	// in this cell.
	Findings []string `json:"findings,omitempty"`
}

// Entry is one distinct bug (by spec.Identity) with its status across
// nights. Finding is its latest sighting, Signature that sighting's
// signature, and DTypes the dtypes it was seen in on every night.
type Entry struct {
	Identity  string    `json:"identity"`
	Signature string    `json:"signature"`
	DTypes    []string  `json:"dtypes,omitempty"`
	Status    string    `json:"status"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Nights    int       `json:"nights"`
	// Expected is the finding's spec.Finding.Expected: a negative control
	// found by a relation it must be found by.
	Expected bool         `json:"expected"`
	Words    string       `json:"words"`
	Finding  spec.Finding `json:"finding"`
}

// Night is one point of the trend: a result file's findings counted against
// the nights before it.
type Night struct {
	Started      time.Time `json:"started"`
	Path         string    `json:"path"`
	Cases        int64     `json:"cases"`
	Findings     int       `json:"findings"`
	New          int       `json:"new"`
	StillFailing int       `json:"still_failing"`
	Fixed        int       `json:"fixed"`
	NotSeen      int       `json:"not_seen"`
}

// Source is one result file read from disk.
type Source struct {
	Path   string
	Result spec.Result
}

// Load reads result files. It rejects versions newer than
// spec.ResultVersion and files without a start time (a case file or a
// report is not a result).
func Load(paths ...string) ([]Source, error) {
	return load("result", paths, func(p string, r *spec.Result) (Source, error) {
		if r.Version < 1 || r.Version > spec.ResultVersion {
			return Source{}, fmt.Errorf("version %d, this build reads 1 to %d", r.Version, spec.ResultVersion)
		}
		if r.Started.IsZero() {
			return Source{}, errors.New("no start time: not a result file (bitparity run --json writes those)")
		}
		return Source{Path: p, Result: *r}, nil
	})
}

// load reads each file of paths as JSON into a T (what names the files
// in errors: "result", "scan results") and returns what source makes of
// it, an error of source naming the file; no path is an error.
func load[T, S any](what string, paths []string, source func(path string, v *T) (S, error)) ([]S, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no %s files given", what)
	}
	srcs := make([]S, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, p, err)
		}
		s, err := source(p, &v)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, p, err)
		}
		srcs = append(srcs, s)
	}
	return srcs, nil
}

// Options are what Build knows besides the result files. The zero value
// is valid.
type Options struct {
	// Fixed holds the identities (spec.Identity) whose case a recheck
	// passed (corpus cases marked fixed by `bitparity corpus recheck`).
	Fixed map[string]bool
}

// Build is BuildWith without Options: no bug is known fixed.
func Build(srcs []Source, generated time.Time) (*Report, error) {
	return BuildWith(srcs, generated, Options{})
}

// before orders the nights: by start time, ties by path.
func before(a, b Source) bool {
	if !a.Result.Started.Equal(b.Result.Started) {
		return a.Result.Started.Before(b.Result.Started)
	}
	return a.Path < b.Path
}

// Tonight is the source BuildWith takes for tonight: the latest by start
// time, ties to the greater path; nil for none.
func Tonight(srcs []Source) *Source {
	if len(srcs) == 0 {
		return nil
	}
	last := &srcs[0]
	for i := range srcs[1:] {
		if before(*last, srcs[i+1]) {
			last = &srcs[i+1]
		}
	}
	return last
}

// BuildWith makes the report of srcs, stamped with generated. The sources
// are ordered by Result.Started (then path); the last one is tonight.
// Findings are grouped by spec.Identity: the same bug seen with other
// seeds, shapes or dtypes is one entry, its dtypes listed.
//
// Status rules, for tonight's identity set S and the earlier nights'
// union E: S\E is new, S∩E still failing; an identity of the previous
// night missing from S is fixed when a recheck of its case passed
// (opts.Fixed), not seen when tonight ran its target A (TargetStats with
// Cases > 0) without finding it, and not rerun otherwise. The trend
// applies the same rules to every night against the nights before it.
func BuildWith(srcs []Source, generated time.Time, opts Options) (*Report, error) {
	if len(srcs) == 0 {
		return nil, errors.New("no result files given")
	}
	srcs = append([]Source(nil), srcs...)
	sort.SliceStable(srcs, func(i, j int) bool { return before(srcs[i], srcs[j]) })

	r := &Report{Version: Version, Generated: generated.UTC()}
	nights := make([]map[string]spec.Finding, len(srcs))
	for i, s := range srcs {
		r.Inputs = append(r.Inputs, Input{
			Path: s.Path, Started: s.Result.Started, Duration: s.Result.Duration,
			Seed: s.Result.Seed, Cases: s.Result.Cases, Findings: len(s.Result.Findings),
			Env: s.Result.Env, Args: s.Result.Args, Interrupted: s.Result.Interrupted,
		})
		nights[i] = byIdentity(s.Result.Findings)
	}
	dtypes := map[string][]string{}
	for _, s := range srcs {
		for _, f := range s.Result.Findings {
			id := spec.Identity(f)
			if d := dtypeWords(f.Case); !slices.Contains(dtypes[id], d) {
				dtypes[id] = append(dtypes[id], d)
			}
		}
	}

	// Trend: every night against the nights before it.
	seen := map[string]bool{}
	for i, s := range srcs {
		n := Night{Started: s.Result.Started, Path: s.Path, Cases: s.Result.Cases, Findings: len(nights[i])}
		for sig := range nights[i] {
			if seen[sig] {
				n.StillFailing++
			} else {
				n.New++
			}
		}
		if i > 0 {
			for sig, f := range nights[i-1] {
				if _, ok := nights[i][sig]; ok {
					continue
				}
				if opts.Fixed[sig] {
					n.Fixed++
				} else if ranTarget(s.Result, f.TargetA) {
					n.NotSeen++
				}
			}
		}
		for sig := range nights[i] {
			seen[sig] = true
		}
		r.Trend = append(r.Trend, n)
	}

	// Entries: tonight's findings plus last night's that are gone.
	last := len(srcs) - 1
	tonight := srcs[last].Result
	for sig, f := range nights[last] {
		e := entry(sig, f, srcs, nights)
		e.DTypes = dtypes[sig]
		e.Expected = f.Expected
		if e.Nights > 1 {
			e.Status = StatusStillFailing
		} else {
			e.Status = StatusNew
		}
		r.Findings = append(r.Findings, e)
	}
	if last > 0 {
		for sig, f := range nights[last-1] {
			if _, ok := nights[last][sig]; ok {
				continue
			}
			e := entry(sig, f, srcs, nights)
			e.DTypes = dtypes[sig]
			e.Expected = f.Expected
			switch {
			case opts.Fixed[sig]:
				e.Status = StatusFixed
			case ranTarget(tonight, f.TargetA):
				e.Status = StatusNotSeen
			default:
				e.Status = StatusNotRerun
			}
			r.Findings = append(r.Findings, e)
		}
	}
	sortEntries(r.Findings)

	exp := map[string]bool{}
	for _, e := range r.Findings {
		exp[e.Identity] = e.Expected
	}
	r.Cells = cells(tonight, nights[last], exp)
	r.Summary = Summary{
		Started: tonight.Started, Duration: tonight.Duration, Cases: tonight.Cases,
		Targets: len(tonight.Targets), Cells: len(r.Cells), Findings: len(nights[last]),
		Interrupted: tonight.Interrupted,
	}
	for _, c := range r.Cells {
		if c.Status == CellFail || c.Status == CellCrash {
			r.Summary.CellsFailing++
		}
	}
	for _, e := range r.Findings {
		if e.Status == StatusNew || e.Status == StatusStillFailing {
			if e.Expected {
				r.Summary.Expected++
			} else {
				r.Summary.Unexpected++
				if e.Status == StatusNew {
					r.Summary.NewUnexpected++
				}
			}
		}
		switch e.Status {
		case StatusNew:
			r.Summary.New++
		case StatusStillFailing:
			r.Summary.StillFailing++
		case StatusFixed:
			r.Summary.Fixed++
		case StatusNotSeen:
			r.Summary.NotSeen++
		case StatusNotRerun:
			r.Summary.NotRerun++
		}
	}
	return r, nil
}

// byIdentity keeps, per identity (spec.Identity), the earliest finding (by
// FoundAt, then file order).
func byIdentity(fs []spec.Finding) map[string]spec.Finding {
	m := make(map[string]spec.Finding, len(fs))
	for _, f := range fs {
		sig := spec.Identity(f)
		if old, ok := m[sig]; ok && !f.FoundAt.Before(old.FoundAt) {
			continue
		}
		m[sig] = f
	}
	return m
}

// cellTarget is the target whose cell holds finding f: a negative control
// (a target B that does not claim invariance, beside an invariant A such
// as the oracle) under its own name, otherwise target A.
func cellTarget(f spec.Finding, stats map[string]spec.TargetStats) string {
	a, aok := stats[f.TargetA]
	b, bok := stats[f.TargetB]
	if f.TargetB != "" && bok && !b.Invariant && (!aok || a.Invariant) {
		return f.TargetB
	}
	return f.TargetA
}

func ranTarget(r spec.Result, target string) bool {
	for _, t := range r.Targets {
		if t.Target == target && t.Cases > 0 {
			return true
		}
	}
	return false
}

func entry(sig string, f spec.Finding, srcs []Source, nights []map[string]spec.Finding) Entry {
	e := Entry{Identity: sig, Signature: spec.FindingID(f), Finding: f, Words: words.Finding(f)}
	for i, n := range nights {
		if _, ok := n[sig]; !ok {
			continue
		}
		if e.Nights == 0 {
			e.FirstSeen = srcs[i].Result.Started
		}
		e.LastSeen = srcs[i].Result.Started
		e.Nights++
	}
	return e
}

var statusRank = map[string]int{StatusNew: 0, StatusStillFailing: 1, StatusNotSeen: 2, StatusNotRerun: 3, StatusFixed: 4}

// sortEntries orders by status (new first), unexpected before expected,
// op, relation, target, signature.
func sortEntries(es []Entry) {
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if statusRank[a.Status] != statusRank[b.Status] {
			return statusRank[a.Status] < statusRank[b.Status]
		}
		if a.Expected != b.Expected {
			return !a.Expected
		}
		if a.Finding.Case.Op != b.Finding.Case.Op {
			return a.Finding.Case.Op < b.Finding.Case.Op
		}
		if a.Finding.Relation != b.Finding.Relation {
			return a.Finding.Relation < b.Finding.Relation
		}
		if a.Finding.TargetA != b.Finding.TargetA {
			return a.Finding.TargetA < b.Finding.TargetA
		}
		return a.Identity < b.Identity
	})
}

// cells makes one cell per op x relation x target of tonight: for each
// target, the relations its TargetStats lists plus those its findings name.
// The op is TargetStats.Op, or else the op of the target's findings. A
// finding whose target A has no TargetStats gets cells of its own. A cell
// fails on any unexpected finding, crashes on a crash, and is "expected"
// when all its findings are on negative controls; in an interrupted
// campaign a cell that would pass or not run is "interrupted".
func cells(res spec.Result, tonight map[string]spec.Finding, exp map[string]bool) []Cell {
	type key struct {
		op       spec.Op
		rel, tgt string
	}
	idx := map[key]*Cell{}
	var order []key
	add := func(k key, st spec.TargetStats) *Cell {
		if c, ok := idx[k]; ok {
			return c
		}
		status := CellPass
		if st.Cases == 0 {
			status = CellNotRun
		}
		c := &Cell{Op: k.op, Relation: k.rel, Target: k.tgt, Invariant: st.Invariant, Status: status, Cases: st.Cases}
		idx[k] = c
		order = append(order, k)
		return c
	}
	stats := map[string]spec.TargetStats{}
	for _, st := range res.Targets {
		stats[st.Target] = st
	}
	findingOp := map[string]spec.Op{}
	for _, f := range tonight {
		if _, ok := findingOp[f.TargetA]; !ok {
			findingOp[f.TargetA] = f.Case.Op
		}
	}
	for _, st := range res.Targets {
		op := st.Op
		if op == "" {
			op = findingOp[st.Target]
		}
		for _, rel := range st.Relations {
			add(key{op, rel, st.Target}, st)
		}
	}
	for sig, f := range tonight {
		tgt := cellTarget(f, stats)
		st, ok := stats[tgt]
		if !ok {
			st = spec.TargetStats{Target: tgt, Cases: f.CasesBefore}
		}
		c := add(key{f.Case.Op, f.Relation, tgt}, st)
		c.Findings = append(c.Findings, sig)
		switch {
		case f.Kind == spec.KindCrash:
			c.Status = CellCrash
		case c.Status == CellCrash:
		case !exp[sig]:
			c.Status = CellFail
		case c.Status != CellFail:
			c.Status = CellExpected
		}
	}
	// A target with stats but neither relations nor findings still gets a
	// cell, so a clean invariant target shows up as passing.
	for _, st := range res.Targets {
		found := false
		for _, k := range order {
			if k.tgt == st.Target {
				found = true
				break
			}
		}
		if !found {
			add(key{st.Op, "all", st.Target}, st)
		}
	}
	out := make([]Cell, 0, len(order))
	for _, k := range order {
		c := *idx[k]
		if res.Interrupted && (c.Status == CellPass || c.Status == CellNotRun) {
			c.Status = CellInterrupted
		}
		sort.Strings(c.Findings)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		if a.Relation != b.Relation {
			return a.Relation < b.Relation
		}
		return a.Target < b.Target
	})
	return out
}

// dtypeWords is a sighting's dtypes in words: "bf16->bf16", with
// " compared in fp32" when the compare dtype is not the output's.
func dtypeWords(c spec.Case) string {
	w := string(c.In) + "->" + string(c.Out)
	if c.CompareDType() != c.Out {
		w += " compared in " + string(c.CompareDType())
	}
	return w
}
