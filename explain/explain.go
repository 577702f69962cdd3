// Package explain infers, for each class of a finding's drift map, which
// schedules of the op's schedule space (oracle schedules: threads, vector
// width, warp and cross-warp order, split-K, tensor core, KV tile, splits)
// reproduce the target's bits, and says it in words:
//
//	rows % 32 == 0: threads=64 vec=8 warp=butterfly cross=sequential ...; otherwise: threads=32 vec=4 ...
//
// or that no schedule of the space reproduces a class. It never guesses: a
// schedule is named only when it gives the target's output and fp32 tap
// bits on every probe row.
package explain

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/spec"
)

// Options tune the search; the zero value is valid.
type Options struct {
	// Seed seeds the probe inputs (0: a fixed seed).
	Seed uint64
}

// Match is a set of schedules that give the same bits on every probe:
// Schedules[0] is the first in the space's canonical order. Orders is the
// number of different operation orders among them at this shape
// (attention schedules with the same split bounds and effective tile are
// one order); 1 means they are the same computation, more that the probes
// could not tell those orders apart.
type Match struct {
	Schedules []string `json:"schedules"`
	Orders    int      `json:"orders"`
}

// Target is what the search found for one target at one class.
type Target struct {
	Name string `json:"name"`
	// Matches are the groups of schedules that reproduce the target's
	// bits; empty: no schedule of the model space reproduces this class.
	// More than one group means the probes could not tell them apart from
	// the target but could from each other, which the search reports
	// rather than choosing.
	Matches []Match `json:"matches"`
	// Space is the number of schedules in the op's space; Ran how many
	// were run (one of each group with the same order at this shape);
	// Distinct how many different bit patterns those gave on the first
	// probe batch (FirstRows rows); Survivors how many of those matched
	// the target there (then confirmed on every probe row).
	Space     int `json:"space"`
	Ran       int `json:"ran"`
	Distinct  int `json:"distinct"`
	Survivors int `json:"survivors"`
	FirstRows int `json:"first_rows"`
	// Pruned is true when more than pruneAbove orders ran: they ran on
	// one probe row first (FirstRows is 1).
	Pruned bool `json:"pruned,omitempty"`
	// ProbeRows is the number of rows compared.
	ProbeRows int `json:"probe_rows"`
	// Taps is true when the comparison included the target's fp32 taps.
	Taps bool `json:"taps"`
	// Refined says whether the matches were narrowed by probes with fp32
	// outputs (a bf16 or fp16 output hides the order of the last
	// multiplies): "yes", "unsupported" (the target has no fp32 output),
	// "no match" (no schedule matched those; the matches stand unrefined)
	// or "" (not needed).
	Refined string `json:"refined,omitempty"`
}

// Class is the explanation of one class of the drift map.
type Class struct {
	Label   string   `json:"label"`
	Value   int      `json:"value"` // the value of the swept dimension probed
	Targets []Target `json:"targets"`
}

// Explanation of a finding's drift map.
type Explanation struct {
	Dim     string  `json:"dim"`
	Rule    string  `json:"rule"`  // the drift map's rule
	Words   string  `json:"words"` // the rule with each class replaced by its schedules
	Classes []Class `json:"classes"`
}

// Finding explains f's drift map class by class. f must have a drift map
// (fuzz's minimize adds it; Map computes one).
func Finding(ctx context.Context, f *spec.Finding, o Options) (*Explanation, error) {
	if f.DriftMap == nil || len(f.DriftMap.Classes) == 0 {
		return nil, fmt.Errorf("explain: the finding has no drift map")
	}
	seed := o.Seed
	if seed == 0 {
		seed = 0x6578706c61696e // "explain"
	}
	dm := f.DriftMap
	ex := &Explanation{Dim: dm.Dim, Rule: dm.Rule}
	for _, cl := range dm.Classes {
		if len(cl.Values) == 0 {
			continue
		}
		v := probeValue(dm, cl)
		c := Class{Label: cl.Label, Value: v}
		for _, name := range f.Case.Targets {
			t, err := fuzz.Lookup(name)
			if err != nil {
				return nil, fmt.Errorf("explain: %w", err)
			}
			if t.Info().Op != f.Case.Op {
				continue
			}
			got, err := Infer(ctx, t, f.Case, dm.Dim, v, seed)
			if err != nil {
				return nil, fmt.Errorf("explain: class %s (%s = %d), target %s: %w", cl.Label, dm.Dim, v, name, err)
			}
			c.Targets = append(c.Targets, *got)
		}
		ex.Classes = append(ex.Classes, c)
	}
	ex.Words = words(ex)
	return ex, nil
}

// probeValue picks the value of class cl to probe: the smallest sampled
// value next to a value of another class (48 of "kv <= 48", 31 of
// "otherwise" in "rows % 32 == 0"), where the kernel has just switched;
// the class's first value when no neighbour differs.
func probeValue(dm *spec.DriftMap, cl spec.DriftClass) int {
	class := map[int]string{}
	for _, c := range dm.Classes {
		for _, v := range c.Values {
			class[v] = c.Label
		}
	}
	vs := dm.Values
	for i, v := range vs {
		if class[v] != cl.Label {
			continue
		}
		if i > 0 && class[vs[i-1]] != cl.Label || i+1 < len(vs) && class[vs[i+1]] != cl.Label {
			return v
		}
	}
	return cl.Values[0]
}

// Map computes the drift map of f as fuzz's minimize does, for a finding
// that has none.
func Map(ctx context.Context, f *spec.Finding) (*spec.DriftMap, error) {
	sw, err := fuzz.SweepFor(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("explain: drift map: %w", err)
	}
	if sw == nil {
		return nil, fmt.Errorf("explain: relation %s has no dimension to sweep", f.Case.Relation)
	}
	return driftmap.Sweep(ctx, sw.Dim, driftmap.Values(sw.Dim, sw.Onset), sw.Classify)
}

// Infer searches the schedule space of t's op for the schedules that
// reproduce t's bits on probe batches at value v of dimension dim (the
// other dimensions as in case c):
//
//  1. build the probes (probe's doc comment) and run t on them;
//  2. drop schedules whose order at this shape equals an earlier one's
//     (orderKey: same split bounds and effective tile, same chunks, warp or
//     cross order that cannot differ);
//  3. run every remaining schedule on the first probe batch (on its first
//     row only when more than pruneAbove orders remain) and keep those
//     that give t's bits there;
//  4. confirm the survivors on every probe row, and group those that give
//     equal bits;
//  5. when more than one schedule is left and the outputs are bf16 or
//     fp16, run the target and the survivors on probes with fp32 outputs
//     and keep those that match there too (Target.Refined).
func Infer(ctx context.Context, t fuzz.Target, c spec.Case, dim string, v int, seed uint64) (*Target, error) {
	info := t.Info()
	ps, err := probes(c, dim, v, seed)
	if err != nil {
		return nil, err
	}
	space, err := Space(info.Op, ps[0].b.In)
	if err != nil {
		return nil, err
	}
	res := &Target{Name: info.Name, Space: len(space)}
	want := make([][]sig, len(ps))
	for i, p := range ps {
		out, err := runRows(ctx, t, p.b, p.rows)
		if err != nil {
			return nil, err
		}
		res.Taps = res.Taps || out.taps
		want[i] = out.rows
		res.ProbeRows += len(p.rows)
	}
	var lens []int
	for _, p := range ps {
		lens = append(lens, p.lens...)
	}
	lens = distinctLens(lens)
	// step 2: one schedule per order
	var groups []*group
	byKey := map[string]*group{}
	for _, s := range space {
		k := orderKey(info.Op, s, lens)
		if g, ok := byKey[k]; ok && k != "" {
			g.members = append(g.members, fmt.Sprint(s))
			continue
		}
		g := &group{rep: s, members: []string{fmt.Sprint(s)}}
		groups = append(groups, g)
		if k != "" {
			byKey[k] = g
		}
	}
	res.Ran = len(groups)
	// step 3: the first probe batch; with many orders, its first row
	// alone first
	first := ps[0]
	if len(groups) > pruneAbove && len(first.rows) > 1 {
		first.rows = first.rows[:1]
		res.Pruned = true
	}
	distinct := map[string]bool{}
	var alive []*group
	for _, g := range groups {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out, err := runRows(ctx, fuzz.ScheduledOracle(info.Op, g.rep), first.b, first.rows)
		if err != nil {
			return nil, err
		}
		var k strings.Builder
		ok := true
		for r, row := range out.rows {
			k.WriteString(row.key(res.Taps))
			ok = ok && row.equal(want[0][r], res.Taps)
		}
		distinct[k.String()] = true
		if ok {
			alive = append(alive, g)
		}
	}
	res.Distinct, res.Survivors, res.FirstRows = len(distinct), len(alive), len(first.rows)
	// step 4: every probe row
	kept, err := confirm(ctx, info.Op, alive, ps, want, res.Taps)
	if err != nil {
		return nil, err
	}
	res.Matches = matchesOf(kept)
	// step 5: with fp32 outputs, when the output dtype may hide the rest
	if len(res.Matches) > 0 && (len(res.Matches) > 1 || len(kept) > 1) && c.Out != spec.FP32 {
		c32 := c
		c32.Out = spec.FP32
		refined, why, err := refine(ctx, t, c32, dim, v, seed, kept)
		if err != nil {
			return nil, err
		}
		res.Refined = why
		if len(refined) > 0 {
			res.Matches = matchesOf(refined)
		}
	}
	return res, nil
}

// group is a set of schedules with the same operation order at the probed
// shape (rep runs for all of them); bits is what rep gave on the probes.
type group struct {
	rep     any
	members []string
	bits    string
}

// confirm returns the groups whose representative gives want on every row
// of ps, each with its bits.
func confirm(ctx context.Context, op spec.Op, gs []*group, ps []probe, want [][]sig, taps bool) ([]*group, error) {
	var kept []*group
	for _, g := range gs {
		h := sha256.New()
		h.Write([]byte(g.bits))
		ok := true
		for i, p := range ps {
			out, err := runRows(ctx, fuzz.ScheduledOracle(op, g.rep), p.b, p.rows)
			if err != nil {
				return nil, err
			}
			for r := range out.rows {
				if !out.rows[r].equal(want[i][r], taps) {
					ok = false
				}
				h.Write([]byte(out.rows[r].key(taps)))
			}
			if !ok {
				break
			}
		}
		if ok {
			kept = append(kept, &group{rep: g.rep, members: g.members, bits: hex.EncodeToString(h.Sum(nil))})
		}
	}
	return kept, nil
}

// matchesOf gathers groups with equal bits into matches, in order.
func matchesOf(gs []*group) []Match {
	idx := map[string]int{}
	var ms []Match
	for _, g := range gs {
		i, ok := idx[g.bits]
		if !ok {
			i = len(ms)
			idx[g.bits] = i
			ms = append(ms, Match{})
		}
		ms[i].Schedules = append(ms[i].Schedules, g.members...)
		ms[i].Orders++
	}
	return ms
}

// refine runs the target and the kept groups on probes of case c (fp32
// outputs) and returns the groups that match there too.
func refine(ctx context.Context, t fuzz.Target, c spec.Case, dim string, v int, seed uint64, kept []*group) ([]*group, string, error) {
	ps, err := probes(c, dim, v, seed+1000)
	if err != nil {
		return nil, "", err
	}
	want := make([][]sig, len(ps))
	taps := false
	for i, p := range ps {
		out, err := runRows(ctx, t, p.b, p.rows)
		if errors.Is(err, fuzz.ErrUnsupported) {
			return nil, "unsupported", nil
		}
		if err != nil {
			return nil, "", err
		}
		taps = taps || out.taps
		want[i] = out.rows
	}
	r, err := confirm(ctx, t.Info().Op, kept, ps, want, taps)
	if err != nil {
		return nil, "", err
	}
	if len(r) == 0 {
		return nil, "no match", nil
	}
	for _, g := range r { // keep the first probes' grouping too
		for _, k := range kept {
			if k.rep == g.rep {
				g.bits = k.bits + g.bits
			}
		}
	}
	return r, "yes", nil
}

// pruneAbove is the number of orders above which step 3 runs one probe
// row instead of a batch.
const pruneAbove = 64

// sig is one row's output and tap bits.
type sig struct{ vals, taps []uint32 }

func (s sig) equal(o sig, taps bool) bool {
	if len(s.vals) != len(o.vals) {
		return false
	}
	for i := range s.vals {
		if s.vals[i] != o.vals[i] {
			return false
		}
	}
	if !taps {
		return true
	}
	if len(s.taps) != len(o.taps) {
		return false
	}
	for i := range s.taps {
		if s.taps[i] != o.taps[i] {
			return false
		}
	}
	return true
}

func (s sig) key(taps bool) string {
	var b []byte
	for _, v := range s.vals {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	if taps {
		b = append(b, 0xff)
		for _, v := range s.taps {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
	}
	return string(b)
}

type rowsOut struct {
	rows []sig
	taps bool
}

// runRows runs t on rows of b and returns each row's bits; taps is true
// when t exposes fp32 taps.
func runRows(ctx context.Context, t fuzz.Target, b *fuzz.Batch, rows []int) (*rowsOut, error) {
	out, err := t.Run(ctx, b, rows)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	if err := out.ToHost(); err != nil {
		return nil, err
	}
	if len(out.Values) != len(rows)*out.Cols {
		return nil, fmt.Errorf("target %s returned %d values for %d rows of %d", t.Info().Name, len(out.Values), len(rows), out.Cols)
	}
	ro := &rowsOut{taps: out.TapCols > 0 && len(out.Taps) == len(rows)*out.TapCols}
	for i := range rows {
		var s sig
		for _, x := range out.Values[i*out.Cols : (i+1)*out.Cols] {
			s.vals = append(s.vals, math.Float32bits(x))
		}
		if ro.taps {
			for _, x := range out.Taps[i*out.TapCols : (i+1)*out.TapCols] {
				s.taps = append(s.taps, math.Float32bits(x))
			}
		}
		ro.rows = append(ro.rows, s)
	}
	return ro, nil
}

// Describe says in words what was found for one target.
func (t Target) Describe() string {
	switch len(t.Matches) {
	case 0:
		return "no schedule of the model space reproduces this class"
	case 1:
		return describeMatch(t.Matches[0])
	}
	parts := make([]string, len(t.Matches))
	for i, m := range t.Matches {
		parts[i] = describeMatch(m)
	}
	return "one of: " + strings.Join(parts, " | ")
}

func describeMatch(m Match) string {
	s := m.Schedules[0]
	n := len(m.Schedules) - 1
	switch {
	case n == 0:
	case m.Orders == 1:
		s += fmt.Sprintf(" (or any of %d others that run the same order at this shape)", n)
	default:
		s += fmt.Sprintf(" (or any of %d others, %d different orders, that give the same bits on every probe)", n, m.Orders-1)
	}
	return s
}
