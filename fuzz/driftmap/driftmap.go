// Package driftmap sweeps one dimension of a failing case (rows, M, KV
// length, batch size) and says in words which values give which output
// bits: a threshold ("kv <= 48 -> A, kv >= 49 -> B"), a periodic class
// ("rows % 32 == 0 -> B, otherwise -> A"), both at once ("rows % 32 == 0
// and rows >= 256 -> B, otherwise -> A"), several ranges, or irregular.
// Drift is often periodic, not monotone, so the search is for classes,
// not only for a bisection point.
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
	Invariant = "invariant"
	Threshold = "threshold"
	Periodic  = "periodic"
	Irregular = "irregular"
)

// MaxModulus is the largest period Sweep tries.
const MaxModulus = 512

// maxRanges is the most runs a map may have to be called a set of ranges.
const maxRanges = 6

// Sweep calls classify for each of values (sorted ascending, duplicates
// dropped), groups the values by the digest classify returns, labels the
// groups A, B, C, ... in the order of their first (smallest) value, and
// recognises the rule, trying in this order:
//
//	invariant  one class:                          "every rows -> A"
//	threshold  two runs of values:                 "kv <= 48 -> A, kv >= 49 -> B"
//	periodic   the class is a function of v % m for the smallest m in
//	           2..MaxModulus with at least two periods in the sampled span:
//	           "rows % 32 == 0 -> B, otherwise -> A"
//	periodic   two classes, one of them only from a threshold T on (or up to
//	           it) and there periodic:  "rows % 32 == 0 and rows >= 256 -> B, otherwise -> A"
//	threshold  3..6 runs (ranges):                  "batch <= 4 -> A, 5 <= batch <= 16 -> B, batch >= 17 -> C"
//	irregular  anything else (Rule empty)
//
// The bounds in a rule are sampled values: "kv <= 48, kv >= 49" means 48
// and 49 were both swept. A classify error stops the sweep and is returned
// with the value; so is ctx's error.
func Sweep(ctx context.Context, dim string, values []int, classify func(v int) (string, error)) (*spec.DriftMap, error) {
	vs := slices.Clone(values)
	sort.Ints(vs)
	vs = slices.Compact(vs)
	m := &spec.DriftMap{Dim: dim, Values: vs}
	if len(vs) == 0 {
		return nil, fmt.Errorf("drift map of %s: no values to sweep", dim)
	}
	labels := make([]int, len(vs))
	index := map[string]int{}
	for i, v := range vs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("drift map of %s at %d: %w", dim, v, err)
		}
		d, err := classify(v)
		if err != nil {
			return nil, fmt.Errorf("drift map of %s at %s = %d: %w", dim, dim, v, err)
		}
		k, ok := index[d]
		if !ok {
			k = len(m.Classes)
			index[d] = k
			m.Classes = append(m.Classes, spec.DriftClass{Label: label(k), Digest: d})
		}
		m.Classes[k].Values = append(m.Classes[k].Values, v)
		labels[i] = k
	}
	m.Kind, m.Rule = recognise(dim, vs, labels)
	return m, nil
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

// recognise returns the kind and the rule of labelled, ascending values.
func recognise(dim string, vs []int, ls []int) (kind, rule string) {
	n := slices.Max(ls) + 1
	rs := runs(vs, ls)
	switch {
	case n == 1:
		return Invariant, fmt.Sprintf("every %s -> A", dim)
	case len(rs) == 2:
		return Threshold, rangesRule(dim, rs)
	}
	if m, res, ok := periodic(vs, ls); ok {
		return Periodic, periodicRule(dim, m, res, n, "")
	}
	if n == 2 {
		if r, ok := mixed(dim, vs, ls); ok {
			return Periodic, r
		}
	}
	if len(rs) <= maxRanges {
		return Threshold, rangesRule(dim, rs)
	}
	return Irregular, ""
}

// rangesRule writes runs as ranges: "d <= a -> A, b <= d <= c -> B, d >= e -> C".
func rangesRule(dim string, rs []run) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		switch {
		case i == 0:
			parts[i] = fmt.Sprintf("%s <= %d -> %s", dim, r.to, label(r.lab))
		case i == len(rs)-1:
			parts[i] = fmt.Sprintf("%s >= %d -> %s", dim, r.from, label(r.lab))
		case r.from == r.to:
			parts[i] = fmt.Sprintf("%s == %d -> %s", dim, r.from, label(r.lab))
		default:
			parts[i] = fmt.Sprintf("%d <= %s <= %d -> %s", r.from, dim, r.to, label(r.lab))
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

// periodicRule writes the residue classes: the label holding the most
// residues is "otherwise"; every other label lists its residues:
// "rows % 32 == 0 -> B, otherwise -> A" or "rows % 4 in {1, 3} -> A, ...".
// cond, when not empty, is joined to each listed class with "and".
func periodicRule(dim string, m int, res map[int]int, n int, cond string) string {
	byLab := make([][]int, n)
	for r, l := range res {
		byLab[l] = append(byLab[l], r)
	}
	other := 0
	for l := range byLab {
		if len(byLab[l]) > len(byLab[other]) {
			other = l
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
		parts = append(parts, what+" -> "+label(l))
	}
	return strings.Join(append(parts, "otherwise -> "+label(other)), ", ")
}

// mixed recognises two classes where one (x) occurs only from a threshold
// on (or only up to one) and is periodic there: the sampled values on
// x's side of its first (last) occurrence must fit a modulus with at
// least two periods, and every value on the other side is the other class.
func mixed(dim string, vs []int, ls []int) (string, bool) {
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
			return periodicRule(dim, m, res, 2, fmt.Sprintf("%s >= %d", dim, vs[first])), true
		}
		if m, res, ok := periodic(vs[:last+1], ls[:last+1]); ok {
			return periodicRule(dim, m, res, 2, fmt.Sprintf("%s <= %d", dim, vs[last])), true
		}
	}
	return "", false
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
