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
	"fmt"
	"strings"

	"github.com/bitparity/bitparity/fuzz/mapper"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
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
	if _, ok := f.Case.Op.Info(); !ok {
		return nil, fmt.Errorf("explain: op %s has no reduction orders to infer here (explain covers %v); its finding says its rows in the op's own words", f.Case.Op, spec.Ops)
	}
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
			t, err := target.Lookup(name)
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

// Map computes the drift map of f, for a finding that has none, with the
// campaign's mapper (mapper.Map: every dimension the relation varies,
// over the finding's own data and the mapper's random draws), so explain
// explains the classes a campaign would have printed.
func Map(ctx context.Context, f *spec.Finding) (*spec.DriftMap, error) {
	dm, err := mapper.Map(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("explain: drift map: %w", err)
	}
	if dm == nil {
		return nil, fmt.Errorf("explain: relation %s has no dimension to sweep", f.Case.Relation)
	}
	return dm, nil
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
