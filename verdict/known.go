package verdict

import (
	"context"
	"fmt"
	"io"
	"reflect"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
)

// Known is a --known baseline: the findings of case folders or buckets (a
// team's corpus of bugs already filed), open or marked fixed. A finding
// matches a case when it is the same drift (SameDrift): the same identity
// (kind, op, relation and targets: spec.Identity) and a drift map, or
// else an onset, that agrees with the case's. A finding that matches an
// open case is known and does not fail a run; one that matches a case
// marked fixed is a regression and fails it like any new finding. A case
// imported from another corpus that no recheck here has replayed
// (corpus.Status.Imported) is another team's claim, not this team's
// baseline: it is left out (with a warning), so a finding that matches
// only it fails the run until `corpus recheck` has replayed it. The
// nil *Known knows nothing.
type Known struct {
	open, fixed map[string][]knownCase // identity -> its cases
}

// knownCase is one case file of the baseline.
type knownCase struct {
	at      string // folder/name
	finding spec.Finding
}

// LoadKnown reads the case folders or bucket URLs dirs. One that does not
// exist or cannot be read is an error; a file in it that does not decode
// is reported on warn and skipped, and so, once a folder, is the count of
// imported cases not rechecked yet (Known).
func LoadKnown(ctx context.Context, dirs []string, warn io.Writer) (*Known, error) {
	k := &Known{open: map[string][]knownCase{}, fixed: map[string][]knownCase{}}
	for _, dir := range dirs {
		d, err := corpus.Open(ctx, dir, false)
		if err != nil {
			return nil, fmt.Errorf("--known %s: %w", dir, err)
		}
		entries, errs := corpus.Load(d)
		for _, err := range errs {
			if warn != nil {
				fmt.Fprintf(warn, "warning: --known %s: %v (skipped)\n", dir, err)
			}
		}
		imported := 0
		for _, e := range entries {
			f := e.File
			if f.Finding == nil {
				continue // a regression case that must keep passing: nothing known
			}
			if f.Status.Imported {
				imported++
				continue
			}
			kc := knownCase{at: dir + "/" + e.Name, finding: *f.Finding}
			id := spec.Identity(*f.Finding)
			if f.Status.State == corpus.StateFixed {
				k.fixed[id] = append(k.fixed[id], kc)
			} else {
				k.open[id] = append(k.open[id], kc)
			}
		}
		if imported > 0 && warn != nil {
			fmt.Fprintf(warn, "warning: --known %s: %d imported case(s) not rechecked here are not a baseline (bitparity corpus recheck %s)\n",
				dir, imported, dir)
		}
	}
	return k, nil
}

// Match names the open case f is the same drift as, if any.
func (k *Known) Match(f spec.Finding) (string, bool) {
	if k == nil {
		return "", false
	}
	return match(k.open, f)
}

// Knows reports whether some case of f's identity (kind, op, relation and
// targets) is known, open or fixed, whatever its drift.
func (k *Known) Knows(f spec.Finding) bool {
	if k == nil {
		return false
	}
	id := spec.Identity(f)
	return len(k.open[id]) > 0 || len(k.fixed[id]) > 0
}

// Regression names the case marked fixed that f is the same drift as, if
// any.
func (k *Known) Regression(f spec.Finding) (string, bool) {
	if k == nil {
		return "", false
	}
	return match(k.fixed, f)
}

func match(cases map[string][]knownCase, f spec.Finding) (string, bool) {
	for _, kc := range cases[spec.Identity(f)] {
		if SameDrift(kc.finding, f) {
			return kc.at, true
		}
	}
	return "", false
}

// SameDrift reports whether findings a and b of one identity are the same
// drift. When both carry a drift map they are when the maps are over the
// same dimension and split the values both swept alike: two values in one
// class of one map are in one class of the other, and two values in
// different classes of one are in different classes of the other (the
// labels and the digests, which depend on the dtype and the inputs, do not
// count). Maps that share fewer than two values agree when their rules are
// the same non-empty words. When either has no map (a crash, or a run with
// --no-shrink) they are the same drift when their cases have the same
// onset: the same shape, which shrinking makes the smallest that fails.
// Findings of different identities are never the same drift.
func SameDrift(a, b spec.Finding) bool {
	if spec.Identity(a) != spec.Identity(b) {
		return false
	}
	ma, mb := a.DriftMap, b.DriftMap
	if ma == nil || mb == nil || len(ma.Classes) == 0 || len(mb.Classes) == 0 {
		return reflect.DeepEqual(a.Case.Shape, b.Case.Shape)
	}
	if ma.Dim != mb.Dim {
		return false
	}
	ca, cb := classOf(ma), classOf(mb)
	var shared []int
	for v := range ca {
		if _, ok := cb[v]; ok {
			shared = append(shared, v)
		}
	}
	if len(shared) < 2 {
		return ma.Rule != "" && ma.Rule == mb.Rule
	}
	// the classes pair off one to one over the shared values
	ab, ba := map[int]int{}, map[int]int{}
	for _, v := range shared {
		x, y := ca[v], cb[v]
		if p, ok := ab[x]; ok && p != y {
			return false
		}
		if p, ok := ba[y]; ok && p != x {
			return false
		}
		ab[x], ba[y] = y, x
	}
	return true
}

// classOf maps each swept value of m to the index of its class.
func classOf(m *spec.DriftMap) map[int]int {
	out := map[int]int{}
	for i, c := range m.Classes {
		for _, v := range c.Values {
			out[v] = i
		}
	}
	return out
}

// FixedIdentities returns the identities (spec.Identity) of the findings
// whose case file in s a recheck marked fixed: the only evidence that makes
// a finding missing from a night "fixed" in a report (reports.Options.Fixed)
// rather than "not seen". A file that does not decode is an error.
func FixedIdentities(s corpus.Store) (map[string]bool, error) {
	entries, errs := corpus.Load(s)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	fixed := map[string]bool{}
	for _, e := range entries {
		if e.File.Finding != nil && e.File.Status.State == corpus.StateFixed {
			fixed[spec.Identity(*e.File.Finding)] = true
		}
	}
	return fixed, nil
}
