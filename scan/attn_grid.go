package scan

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Grid is a two-dimensional map of attn_decode: the requests decoded
// together (the items dimension, batch From..To of s) at every KV length
// of a range, for the rules that need both (a split-KV decode splits by
// requests x heads against the SMs, and only a cache longer than its
// tiles shows it).
type Grid struct {
	// KV maps the KV length: each class is one map of the requests, its
	// Digest that map's rule ("every batch -> A" where nothing differed).
	KV *spec.DriftMap
	// Rule says both in words: "batch >= 17 and kv >= 256 -> B, otherwise
	// -> A" where the requests split one way from one KV length on, else
	// the requests' rule of each range of KV lengths ("kv <= 64: every
	// batch -> A; kv >= 65: batch <= 16 -> A, batch >= 17 -> B").
	Rule string
	// Scans are the requests scans run, by KV length.
	Scans map[int]*Result
}

// ScanGrid maps attn_decode spec s (dimension items: the requests decoded
// together, From..To, every request of one KV length) over the KV lengths
// kvs: for each KV length sampled it runs the scan at Shape.KV = kv and
// classifies the length by the rule of the requests' map; where two
// neighbouring lengths sampled have other rules, the lengths between are
// bisected (driftmap.Sweep), so every boundary in kv is exact. A class of
// the requests' map is A where the batch's rows equal the requests alone.
// The rule holds on the values scanned: a KV length between two sampled
// ones of one rule is assumed to have it.
func ScanGrid(ctx context.Context, s spec.ScanSpec, kvs []int, opt Options) (*Grid, error) {
	if t, err := target.Lookup(s.Target); err == nil && s.Op == "" {
		s.Op = t.Info().Op
	}
	if !sweeps(s.Op, spec.ScanKV) || (s.Dim != "" && s.Dim != spec.ScanItems) { // a grid is a kv sweep of each batch size
		return nil, fmt.Errorf("%w: a grid scans the requests of attn_decode (dim items) over KV lengths, not %s %s", ErrBadSpec, s.Op, s.Dim)
	}
	if s.From > 1 {
		return nil, fmt.Errorf("%w: a grid's requests start at 1 (the requests alone are class A), not %d", ErrBadSpec, s.From)
	}
	if len(kvs) == 0 || kvs[0] < 1 {
		return nil, fmt.Errorf("%w: a grid needs KV lengths >= 1, got %v", ErrBadSpec, kvs)
	}
	g := &Grid{Scans: map[int]*Result{}}
	classify := func(kv int) (string, error) {
		t := s
		t.Shape.KV, t.Shape.KVLens = kv, nil
		r, err := Run(ctx, t, opt)
		if err != nil {
			return "", err
		}
		g.Scans[kv] = r
		if r.Map.Rule == "" {
			return "", fmt.Errorf("kv %d: the requests' map is irregular (%s): no grid rule", kv, MapWords(r.Map))
		}
		return r.Map.Rule, nil
	}
	m, err := driftmap.Options{Runs: 1}.Sweep(ctx, spec.ScanKV, kvs, classify)
	if err != nil {
		return nil, fmt.Errorf("scan: grid: %w", err)
	}
	g.KV, g.Rule = m, gridRule(m, s.Op.ItemsWord())
	return g, nil
}

// gridRule says a map over kv whose classes are rules over dim in words.
func gridRule(m *spec.DriftMap, dim string) string {
	rule := map[string]string{} // label -> the requests' rule
	for _, c := range m.Classes {
		rule[c.Label] = c.Digest
	}
	type run struct {
		lo, hi int
		rule   string
	}
	var rs []run
	label := map[int]string{}
	for _, c := range m.Classes {
		for _, v := range c.Values {
			label[v] = c.Label
		}
	}
	for _, v := range m.Values {
		if n := len(rs); n > 0 && rs[n-1].rule == rule[label[v]] {
			rs[n-1].hi = v
			continue
		}
		rs = append(rs, run{v, v, rule[label[v]]})
	}
	uniform := "every " + dim + " -> A"
	if len(rs) == 1 {
		return rs[0].rule
	}
	// one range of kv where dim splits in two at T, the other uniform:
	// "dim >= T and kv >= K -> B, otherwise -> A"
	if len(rs) == 2 && (rs[0].rule == uniform) != (rs[1].rule == uniform) {
		split, kv := rs[1].rule, fmt.Sprintf("kv >= %d", rs[1].lo)
		if rs[1].rule == uniform {
			split, kv = rs[0].rule, fmt.Sprintf("kv <= %d", rs[0].hi)
		}
		var t int
		if n, _ := fmt.Sscanf(split, dim+" <= %d -> A, "+dim+" >= ", &t); n == 1 && split == fmt.Sprintf("%s <= %d -> A, %s >= %d -> B", dim, t, dim, t+1) {
			return fmt.Sprintf("%s >= %d and %s -> B, otherwise -> A", dim, t+1, kv)
		}
	}
	var parts []string
	for i, r := range rs {
		var at string
		switch {
		case i == 0:
			at = fmt.Sprintf("kv <= %d", r.hi)
		case i == len(rs)-1:
			at = fmt.Sprintf("kv >= %d", r.lo)
		default:
			at = fmt.Sprintf("%d <= kv <= %d", r.lo, r.hi)
		}
		parts = append(parts, at+": "+r.rule)
	}
	return strings.Join(parts, "; ")
}

// ParseKVs parses --grid-kv: KV lengths >= 1, comma-separated, ascending;
// "" is none (nil).
func ParseKVs(v string) ([]int, error) {
	var kvs []int
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || (len(kvs) > 0 && n <= kvs[len(kvs)-1]) {
			return nil, fmt.Errorf("--grid-kv: %q is not an ascending list of KV lengths >= 1", v)
		}
		kvs = append(kvs, n)
	}
	return kvs, nil
}

// Text prints the grid: "grid: TARGET, batch FROM..TO x kv FIRST..LAST
// (N lengths scanned): RULE", then "  kv K: RULE" for each KV length
// scanned, ascending.
func (g *Grid) Text(w io.Writer) {
	first := g.Scans[g.KV.Values[0]].Spec
	fmt.Fprintf(w, "grid: %s, batch %d..%d x kv %d..%d (%d lengths scanned): %s\n",
		first.Target, first.From, first.To, g.KV.Values[0], g.KV.Values[len(g.KV.Values)-1], len(g.Scans), g.Rule)
	for _, kv := range g.KV.Values {
		fmt.Fprintf(w, "  kv %d: %s\n", kv, g.Scans[kv].Map.Rule)
	}
}
