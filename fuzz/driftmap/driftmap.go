// Package driftmap sweeps one dimension of a failing case (rows, M, KV
// length, batch size, position, padded size) and says in words which
// values give which output bits over the range it swept: a threshold
// ("kv <= 48 -> A, kv >= 49 -> B"), a periodic class ("rows % 32 == 0 ->
// B, otherwise -> A"), both at once ("rows % 32 == 0 and rows >= 256 -> B,
// otherwise -> A"), a periodic rule up to a size and another from it,
// several ranges, or irregular. Drift is often periodic, not monotone, so
// the search is for classes, not only for a bisection point; where two
// sampled neighbours differ, the gap between them is bisected to the exact
// onset. Every value runs twice: values whose runs differ are their own
// class, nondeterministic.
package driftmap

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/bitparity/bitparity/spec"
)

// Kinds of drift maps (spec.DriftMap.Kind).
const (
	Uniform   = "uniform" // one class over the whole swept range: the dimension does not split
	Threshold = "threshold"
	Periodic  = "periodic"
	Irregular = "irregular"
)

// Verdict classes. A classifier that returns one of these names (instead
// of a digest of output bits) gets a class labelled with it, not with a
// letter; Sweep itself makes Nondeterministic and Deterministic.
const (
	// Nondeterministic: the runs of one value gave different classes.
	Nondeterministic = "nondeterministic"
	// Deterministic: every run of the value gave the same bits
	// (Options.Determinism).
	Deterministic = "deterministic"
	// Agree and Differ: two paths gave the same bits, or not (different
	// outputs, or equal outputs and different fp32 intermediates).
	Agree  = "agree"
	Differ = "differ"
	// Crash and Runs: the target faulted or hung at the value, or not.
	Crash = "crash"
	Runs  = "runs"
)

// verdicts lists the verdict classes, the most severe first (SweepDraws
// keeps the most severe over its draws).
var verdicts = []string{Crash, Nondeterministic, Differ, Agree, Deterministic, Runs}

// MaxModulus is the largest period Sweep tries.
const MaxModulus = 512

// maxRanges is the most runs a map may have to be called a set of ranges.
const maxRanges = 6

// DefaultRuns and DefaultProbes are Options' zero values: each value runs
// twice, and bisection and the far-end check classify at most 1024 values
// beyond the ones given.
const (
	DefaultRuns   = 2
	DefaultProbes = 1024
)

// Options configure a sweep; the zero value is valid.
type Options struct {
	// Runs is how many times each value is classified; values whose runs
	// give different classes form the Nondeterministic class. 0 means
	// DefaultRuns; 1 classifies once (a classifier that looks up classes
	// already recorded).
	Runs int
	// Far is the largest value of the dimension the campaign reached. A
	// periodic rule is checked on the values at the far end of the range
	// (the top min(2m, max(m, 128)) values up to max(Far, the largest value
	// swept), m the period) before it is stated; the range then reaches
	// Far.
	Far int
	// Probes bounds the values classified beyond the given ones (gap
	// bisection and the far-end check); 0 means DefaultProbes.
	Probes int
	// Determinism maps only whether each value is deterministic: its
	// classes are Nondeterministic and Deterministic.
	Determinism bool
}

// Sweep is Options{}.Sweep.
func Sweep(ctx context.Context, dim string, values []int, classify func(v int) (string, error)) (*spec.DriftMap, error) {
	return Options{}.Sweep(ctx, dim, values, classify)
}

// Sweep classifies each of values (duplicates dropped) o.Runs times, then
// refines the sampled values:
//
//  1. bisect: while two neighbouring swept values a < b have different
//     classes and b > a+1, classify (a+b)/2; so every boundary between
//     classes is exact ("rows <= 131 -> A, rows >= 132 -> B", never a gap);
//  2. recognise the rule (below); when its last part is periodic with
//     period m, classify the values at the far end of the range (Far) and
//     bisect again, and recognise the rule again over every value swept.
//
// It groups the values by class, labels the groups A, B, C, ... in the
// order of their first (smallest) value (a verdict class keeps its name,
// e.g. nondeterministic, agree, crash), and recognises the rule, trying in
// this order:
//
//	uniform    one class:                          "every rows -> A"
//	threshold  two runs of values:                 "kv <= 48 -> A, kv >= 49 -> B"
//	periodic   the class is a function of v % m for the smallest m in
//	           2..MaxModulus with at least two periods in the sampled span:
//	           "rows % 32 == 0 -> B, otherwise -> A"
//	periodic   two classes, one of them only from a threshold T on (or up to
//	           it) and there periodic:  "rows % 32 == 0 and rows >= 256 -> B, otherwise -> A"
//	periodic   a periodic rule up to T and one class from T on (or one class
//	           up to T and periodic from it):
//	           "rows <= 383: rows % 16 == 0 -> B, otherwise -> A; rows >= 384 -> C"
//	threshold  3..6 runs (ranges):                  "batch <= 4 -> A, 5 <= batch <= 16 -> B, batch >= 17 -> C"
//	irregular  anything else (Rule empty)
//
// The rule holds on the swept range only (the map's From..To); the bounds
// in a rule are swept values: "kv <= 48, kv >= 49" means 48 and 49 were
// both swept. A classify error stops the sweep and is returned with the
// value; so is ctx's error.
func (o Options) Sweep(ctx context.Context, dim string, values []int, classify func(v int) (string, error)) (*spec.DriftMap, error) {
	if len(values) == 0 {
		return nil, fmt.Errorf("drift map of %s: no values to sweep", dim)
	}
	s := &sweep{ctx: ctx, dim: dim, classify: classify, o: o, class: map[int]string{}}
	if s.o.Runs <= 0 {
		s.o.Runs = DefaultRuns
	}
	if s.o.Probes <= 0 {
		s.o.Probes = DefaultProbes
	}
	for _, v := range values {
		if err := s.probe(v); err != nil {
			return nil, err
		}
	}
	s.probes = 0 // the budget counts values beyond the given ones
	if err := s.bisect(); err != nil {
		return nil, err
	}
	vs, ls, names := s.labelled()
	r := recognise(dim, vs, ls, names)
	if r.period > 0 {
		if err := s.farEnd(r.period); err != nil {
			return nil, err
		}
		if err := s.bisect(); err != nil {
			return nil, err
		}
		vs, ls, names = s.labelled()
		r = recognise(dim, vs, ls, names)
	}
	m := &spec.DriftMap{Dim: dim, Values: vs, Kind: r.kind, Rule: r.text,
		From: vs[0], To: vs[len(vs)-1], Runs: s.o.Runs}
	for i, v := range vs {
		if ls[i] == len(m.Classes) {
			m.Classes = append(m.Classes, spec.DriftClass{Label: names[ls[i]], Digest: s.class[v]})
		}
		m.Classes[ls[i]].Values = append(m.Classes[ls[i]].Values, v)
	}
	return m, nil
}

// sweep is the state of one Sweep: the class of every value classified.
type sweep struct {
	ctx      context.Context
	dim      string
	classify func(v int) (string, error)
	o        Options
	class    map[int]string
	probes   int // values classified beyond the given ones
}

// probe classifies v o.Runs times (once when already classified: no-op)
// and records its class.
func (s *sweep) probe(v int) error {
	if _, ok := s.class[v]; ok {
		return nil
	}
	s.probes++
	var first string
	for r := 0; r < s.o.Runs; r++ {
		if err := s.ctx.Err(); err != nil {
			return fmt.Errorf("drift map of %s at %d: %w", s.dim, v, err)
		}
		d, err := s.classify(v)
		if err != nil {
			return fmt.Errorf("drift map of %s at %s = %d: %w", s.dim, s.dim, v, err)
		}
		if r == 0 {
			first = d
		} else if d != first {
			s.class[v] = Nondeterministic
			return nil
		}
	}
	if s.o.Determinism {
		first = Deterministic
	}
	s.class[v] = first
	return nil
}

// sorted returns the classified values, ascending.
func (s *sweep) sorted() []int {
	vs := make([]int, 0, len(s.class))
	for v := range s.class {
		vs = append(vs, v)
	}
	sort.Ints(vs)
	return vs
}

// bisect classifies the midpoint of every gap between neighbouring values
// of different classes until none is left or the probes are spent.
func (s *sweep) bisect() error {
	for {
		vs := s.sorted()
		split := false
		for i := 1; i < len(vs); i++ {
			a, b := vs[i-1], vs[i]
			if b-a < 2 || s.class[a] == s.class[b] {
				continue
			}
			if s.probes >= s.o.Probes {
				return nil
			}
			if err := s.probe(a + (b-a)/2); err != nil {
				return err
			}
			split = true
		}
		if !split {
			return nil
		}
	}
}

// farEnd classifies the top min(2m, max(m, 128)) values up to max(Far,
// the largest value swept), from the top down while probes last.
func (s *sweep) farEnd(m int) error {
	vs := s.sorted()
	far := max(s.o.Far, vs[len(vs)-1])
	n := min(2*m, max(m, 128))
	for v := far; v > far-n && v >= 1; v-- {
		if s.probes >= s.o.Probes {
			break
		}
		if err := s.probe(v); err != nil {
			return err
		}
	}
	return nil
}

// labelled returns the classified values ascending, the index of each
// value's class (classes numbered in the order of their first value) and
// the name of each class: its verdict, or the next letter.
func (s *sweep) labelled() (vs, ls []int, names []string) {
	vs = s.sorted()
	ls = make([]int, len(vs))
	index := map[string]int{}
	letters := 0
	for i, v := range vs {
		d := s.class[v]
		k, ok := index[d]
		if !ok {
			k = len(names)
			index[d] = k
			if slices.Contains(verdicts, d) {
				names = append(names, d)
			} else {
				names = append(names, label(letters))
				letters++
			}
		}
		ls[i] = k
	}
	return vs, ls, names
}

// label returns A..Z, then AA, AB, ...
func label(k int) string {
	s := ""
	for k++; k > 0; k = (k - 1) / 26 {
		s = string(rune('A'+(k-1)%26)) + s
	}
	return s
}

// run is a maximal stretch of sampled values with one label.
type run struct {
	lab      int
	from, to int // first and last sampled value
}

func runs(vs []int, ls []int) []run {
	var rs []run
	for i, v := range vs {
		if i > 0 && ls[i] == ls[i-1] {
			rs[len(rs)-1].to = v
			continue
		}
		rs = append(rs, run{lab: ls[i], from: v, to: v})
	}
	return rs
}

// rule is a recognised pattern: its kind, its words, and the period of
// its last part when that part is periodic (0 otherwise).
type rule struct {
	kind, text string
	period     int
}

// recognise returns the rule of labelled, ascending values; names[l] is
// the name of label l.
func recognise(dim string, vs []int, ls []int, names []string) rule {
	n := slices.Max(ls) + 1
	rs := runs(vs, ls)
	switch {
	case n == 1:
		return rule{kind: Uniform, text: fmt.Sprintf("every %s -> %s", dim, names[0])}
	case len(rs) == 2:
		return rule{kind: Threshold, text: rangesRule(dim, rs, names)}
	}
	if m, res, ok := periodic(vs, ls); ok {
		return rule{Periodic, periodicRule(dim, m, res, names, "", -1), m}
	}
	if n == 2 {
		if r, ok := mixed(dim, vs, ls, names); ok {
			return r
		}
	}
	if r, ok := piecewise(dim, vs, ls, rs, names); ok {
		return r
	}
	if len(rs) <= maxRanges {
		return rule{kind: Threshold, text: rangesRule(dim, rs, names)}
	}
	return rule{kind: Irregular}
}

// rangesRule writes runs as ranges: "d <= a -> A, b <= d <= c -> B, d >= e -> C".
func rangesRule(dim string, rs []run, names []string) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		switch {
		case i == 0:
			parts[i] = fmt.Sprintf("%s <= %d -> %s", dim, r.to, names[r.lab])
		case i == len(rs)-1:
			parts[i] = fmt.Sprintf("%s >= %d -> %s", dim, r.from, names[r.lab])
		case r.from == r.to:
			parts[i] = fmt.Sprintf("%s == %d -> %s", dim, r.from, names[r.lab])
		default:
			parts[i] = fmt.Sprintf("%d <= %s <= %d -> %s", r.from, dim, r.to, names[r.lab])
		}
	}
	return strings.Join(parts, ", ")
}

// periodic finds the smallest modulus m in 2..MaxModulus such that the
// sampled span holds at least two periods, each sampled residue is seen
// twice on average (so the fit is tested, not a lookup table) and every
// sampled value's label is a function of v % m, with at least two labels
// present; res maps each sampled residue to its label.
func periodic(vs []int, ls []int) (m int, res map[int]int, ok bool) {
	if len(ls) == 0 || !slices.ContainsFunc(ls, func(l int) bool { return l != ls[0] }) {
		return 0, nil, false
	}
	span := vs[len(vs)-1] - vs[0] + 1
	for m := 2; m <= MaxModulus && 2*m <= span; m++ {
		if res, ok := fits(vs, ls, m); ok && 2*len(res) <= len(vs) {
			return m, res, true
		}
	}
	return 0, nil, false
}

func fits(vs []int, ls []int, m int) (map[int]int, bool) {
	res := map[int]int{}
	for i, v := range vs {
		r := v % m
		if l, seen := res[r]; seen && l != ls[i] {
			return nil, false
		} else if !seen {
			res[r] = ls[i]
		}
	}
	return res, true
}

// periodicRule writes the residue classes: label other is "otherwise"
// (-1: the label holding the most residues); every other label lists its
// residues: "rows % 32 == 0 -> B, otherwise -> A", "rows % 4 in {1, 3} ->
// A, ..." or, for every residue of m but one, "rows % 64 != 0 -> B". cond,
// when not empty, is joined to each listed class with "and".
func periodicRule(dim string, m int, res map[int]int, names []string, cond string, other int) string {
	byLab := make([][]int, len(names))
	for r, l := range res {
		byLab[l] = append(byLab[l], r)
	}
	if other < 0 {
		other = 0
		for l := range byLab {
			if len(byLab[l]) > len(byLab[other]) {
				other = l
			}
		}
	}
	var parts []string
	for l, rs := range byLab {
		if l == other || len(rs) == 0 {
			continue
		}
		sort.Ints(rs)
		var what string
		switch {
		case len(rs) == 1:
			what = fmt.Sprintf("%s %% %d == %d", dim, m, rs[0])
		case len(rs) == m-1:
			what = fmt.Sprintf("%s %% %d != %d", dim, m, missing(rs, m))
		case len(rs) > 3 && rs[len(rs)-1]-rs[0] == len(rs)-1:
			what = fmt.Sprintf("%s %% %d in [%d, %d]", dim, m, rs[0], rs[len(rs)-1])
		default:
			s := make([]string, len(rs))
			for i, r := range rs {
				s[i] = fmt.Sprint(r)
			}
			what = fmt.Sprintf("%s %% %d in {%s}", dim, m, strings.Join(s, ", "))
		}
		if cond != "" {
			what += " and " + cond
		}
		parts = append(parts, what+" -> "+names[l])
	}
	return strings.Join(append(parts, "otherwise -> "+names[other]), ", ")
}

// missing is the residue of 0..m-1 that ascending rs (m-1 of them) lacks.
func missing(rs []int, m int) int {
	for i, r := range rs {
		if r != i {
			return i
		}
	}
	return m - 1
}

// mixed recognises two classes where one (x) occurs only from a threshold
// on (or only up to one) and is periodic there: the sampled values on
// x's side of its first (last) occurrence must fit a modulus with at
// least two periods, and every value on the other side is the other class.
// x's residues are listed with the threshold; the other class is
// "otherwise": "rows % 64 != 0 and rows >= 900 -> B, otherwise -> A".
func mixed(dim string, vs []int, ls []int, names []string) (rule, bool) {
	for x := 0; x < 2; x++ {
		first, last := -1, -1
		for i, l := range ls {
			if l == x {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		if m, res, ok := periodic(vs[first:], ls[first:]); ok {
			return rule{Periodic, periodicRule(dim, m, res, names, fmt.Sprintf("%s >= %d", dim, vs[first]), 1-x), m}, true
		}
		if m, res, ok := periodic(vs[:last+1], ls[:last+1]); ok {
			return rule{kind: Periodic, text: periodicRule(dim, m, res, names, fmt.Sprintf("%s <= %d", dim, vs[last]), 1-x)}, true
		}
	}
	return rule{}, false
}

// piecewise recognises a periodic rule up to a threshold and one class
// from it on ("rows <= 383: rows % 16 == 0 -> B, otherwise -> A; rows >=
// 384 -> C"), or one class up to a threshold and a periodic rule from it
// on: the run of the one class is the first or the last run, and the
// values on the other side fit a modulus (periodic).
func piecewise(dim string, vs []int, ls []int, rs []run, names []string) (rule, bool) {
	if len(rs) < 3 {
		return rule{}, false
	}
	last := rs[len(rs)-1]
	i := sort.SearchInts(vs, last.from)
	if m, res, ok := periodic(vs[:i], ls[:i]); ok {
		return rule{kind: Periodic, text: fmt.Sprintf("%s <= %d: %s; %s >= %d -> %s", dim, vs[i-1],
			periodicRule(dim, m, res, names, "", -1), dim, last.from, names[last.lab])}, true
	}
	first := rs[0]
	j := sort.SearchInts(vs, first.to) + 1
	if m, res, ok := periodic(vs[j:], ls[j:]); ok {
		return rule{Periodic, fmt.Sprintf("%s <= %d -> %s; %s >= %d: %s", dim, first.to, names[first.lab],
			dim, vs[j], periodicRule(dim, m, res, names, "", -1)), m}, true
	}
	return rule{}, false
}

// Values returns the values to sweep for dimension dim around onset (the
// value the shrinker stopped at), ascending:
//
//	kv, seq_len, batch: every value 1..2·onset+2 when that is at most 200
//	                    values; else 1..16, every value within 72 of the
//	                    onset, and the powers of two, their neighbours and
//	                    the multiples of 64 up to 2·onset;
//	rows, m and the rest: 1..8, every value within 72 of the onset (more
//	                    than two periods of 32 and 64), powers of two and
//	                    their neighbours and multiples of 32 up to
//	                    max(2·onset, 320), and 255, 256, 257 (vLLM's
//	                    threshold).
func Values(dim string, onset int) []int {
	onset = max(onset, 1)
	var s []int
	add := func(lo, hi int) {
		for v := max(lo, 1); v <= hi; v++ {
			s = append(s, v)
		}
	}
	pow2 := func(top int) {
		for p := 2; p <= top+1; p *= 2 {
			s = append(s, p-1, p, p+1)
		}
	}
	mult := func(m, top int) {
		for v := m; v <= top; v += m {
			s = append(s, v)
		}
	}
	switch dim {
	case "kv", "seq_len", "batch":
		if 2*onset+2 <= 200 {
			add(1, 2*onset+2)
			break
		}
		add(1, 16)
		add(onset-72, onset+72)
		pow2(2 * onset)
		mult(64, 2*onset)
	default:
		top := max(2*onset, 320)
		add(1, 8)
		add(onset-72, onset+72)
		pow2(top)
		mult(32, top)
		s = append(s, 255, 256, 257)
	}
	sort.Ints(s)
	return slices.Compact(s)
}

// Positions are the positions of a class's batches at which a drift
// showed: the first and the last, a lower bound on how many distinct ones
// were seen, the step that every difference between two of them is a
// multiple of (their gcd), and how many batches showed it at their last
// position only. The zero value is empty.
type Positions struct {
	from, to, n int
	anchor      int // the first position added
	step        int // gcd of |p - anchor| over the positions added; 0 while all are equal
	batches     int // batches added with a position
	lastOnly    int // of them, those whose one position was their last
}

// AddBatch records the positions ps (distinct) of a batch of size items
// at which the drift showed.
func (s *Positions) AddBatch(ps []int, size int) {
	if len(ps) == 0 {
		return
	}
	b := Positions{from: ps[0], to: ps[0], anchor: ps[0], n: len(ps), batches: 1}
	for _, p := range ps {
		b.from, b.to = min(b.from, p), max(b.to, p)
		b.step = gcd(b.step, abs(p-b.anchor))
	}
	if len(ps) == 1 && ps[0] == size-1 {
		b.lastOnly = 1
	}
	s.Merge(b)
}

// Merge records every position of o, which may repeat positions of s.
func (s *Positions) Merge(o Positions) {
	if o.batches == 0 {
		return
	}
	if s.batches == 0 {
		*s = o
		return
	}
	s.from, s.to = min(s.from, o.from), max(s.to, o.to)
	s.step = gcd(gcd(s.step, o.step), abs(o.anchor-s.anchor))
	s.n = max(s.n, o.n)
	s.batches += o.batches
	s.lastOnly += o.lastOnly
}

// Empty reports whether no position was added.
func (s Positions) Empty() bool { return s.batches == 0 }

// minStepPositions is how many positions Positions needs before its step
// is stated, and how many batches before "the last position" is: fewer
// share a step, or end at the changed row, by chance too often.
const minStepPositions = 8

// Stepped reports whether the positions share a residue class of a step
// above 1, seen often enough to state (Note): at least 8 distinct
// positions in one batch over a span of at least 8 steps.
func (s Positions) Stepped() bool {
	return s.step > 1 && s.n >= minStepPositions && (s.to-s.from)/s.step+1 >= minStepPositions
}

// Note is the note (spec.DriftMap.Note) of class label whose drift shows
// only at positions s: "B: only the last position differs" (every batch
// at its last position only, at least 8 batches), "B: only position 299
// differs", "B:
// positions >= 1 with position % 2 == 1 differ" (Stepped), else "B:
// positions >= 264 differ" (the first position seen; not every later one
// need have shown it). Empty for an empty s.
func (s Positions) Note(label string) string {
	switch {
	case s.batches == 0:
		return ""
	case s.lastOnly == s.batches && s.batches >= minStepPositions && s.from != s.to:
		return fmt.Sprintf("%s: only the last position differs", label)
	case s.from == s.to:
		return fmt.Sprintf("%s: only position %d differs", label, s.from)
	case s.Stepped():
		return fmt.Sprintf("%s: positions >= %d with position %% %d == %d differ", label, s.from, s.step, s.from%s.step)
	}
	return fmt.Sprintf("%s: positions >= %d differ", label, s.from)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
