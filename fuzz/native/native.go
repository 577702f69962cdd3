// Package native runs bitparity's relations under Go's native fuzzer
// (go test -fuzz). Its FuzzXxx targets (native_test.go) decode the
// fuzzer's bytes into a case (the byte format of encoding.go, which Go's
// byte minimizer can shrink), run the case with fuzz.Check against the
// invariant targets of its op (and any targets named in
// BITPARITY_FUZZ_TARGETS), and on a finding shrink the case with
// fuzz/shrink and print the minimal case, its repro command and its seed
// file for testdata/fuzz.
package native

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/internal/gofuzzfile"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// EnvTargets is the environment variable that adds target sets to every
// native target: comma-separated sets, the targets of a two-target set
// joined by '+', e.g.
//
//	BITPARITY_FUZZ_TARGETS=drift-rmsnorm-te-mod32,oracle-attn_prefill+drift-attn-tile48
//
// A FuzzXxx target runs the sets whose first target runs its op and whose
// size fits its relation.
const EnvTargets = "BITPARITY_FUZZ_TARGETS"

// TargetSets returns the target sets a native target of op under relation
// runs: the pairs of relate.Pairs for them that must hold (Expect false);
// for a two-target relation without one, the op's oracle against itself;
// then the sets of EnvTargets that fit. An unknown target in EnvTargets is
// an error.
func TargetSets(op spec.Op, relation string) ([][]string, error) {
	rel, err := relate.ByName(relation)
	if err != nil {
		return nil, err
	}
	var sets [][]string
	for _, p := range relate.Pairs() {
		if p.Op == op && p.Relation == relation && !p.Expect {
			sets = append(sets, p.Targets)
		}
	}
	if len(sets) == 0 && rel.Targets() == 2 {
		o := target.OracleName(op)
		sets = append(sets, []string{o, o})
	}
	for _, s := range strings.Split(os.Getenv(EnvTargets), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		set := strings.Split(s, "+")
		t, err := target.Lookup(set[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvTargets, err)
		}
		for _, name := range set[1:] {
			if _, err := target.Lookup(name); err != nil {
				return nil, fmt.Errorf("%s: %w", EnvTargets, err)
			}
		}
		if t.Info().Op == op && len(set) == rel.Targets() {
			sets = append(sets, set)
		}
	}
	return sets, nil
}

// Find runs case c (its Targets replaced) against each target set in turn
// and returns the first finding, nil when the relation holds for every set.
func Find(ctx context.Context, c spec.Case, sets [][]string) (*spec.Finding, error) {
	for _, set := range sets {
		c.Targets = set
		f, err := fuzz.Check(ctx, c)
		if err != nil {
			return nil, err
		}
		if f != nil {
			return f, nil
		}
	}
	return nil, nil
}

// Minimize is fuzz.Minimize with the tries of opts and the drift map
// within MapBudget: the same shrink and map a campaign makes.
func Minimize(ctx context.Context, f *spec.Finding, opts shrink.Options) (*spec.Finding, shrink.Stats, error) {
	return fuzz.Minimize(ctx, f, fuzz.MinimizeOptions{Shrink: opts, MapBudget: MapBudget})
}

// MapBudget bounds the time Minimize spends on a drift map (shorter than a
// campaign's: a native target's failure is reported at once).
const MapBudget = 10 * time.Second

// SeedFile returns the content of a testdata/fuzz seed file holding case
// c in the byte format: the "go test fuzz v1" header and one []byte line.
func SeedFile(c spec.Case) []byte {
	b, err := gofuzzfile.Format(Encode(c))
	if err != nil {
		panic(err) // a []byte always formats
	}
	return b
}

// WriteSeed writes c's seed file as dir/name atomically (a temporary file,
// then a rename) and returns its path.
func WriteSeed(dir, name string, c spec.Case) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("seed file: %w", err)
	}
	path := filepath.Join(dir, name)
	if err := atomicfile.Write(path, SeedFile(c)); err != nil {
		return "", fmt.Errorf("seed file: %w", err)
	}
	return path, nil
}

// Report is the text a failing native target prints: what differs, the
// minimal case as JSON, the one-line repro command, and the seed file of
// the minimal case with the command that re-runs it under fuzzName.
func Report(f *spec.Finding, st shrink.Stats, fuzzName string) string {
	var b strings.Builder
	b.WriteString(words.Finding(*f) + "\n")
	js, err := json.MarshalIndent(f.Case, "", "  ")
	if err != nil {
		js = []byte(err.Error())
	}
	if m := f.DriftMap; m != nil {
		fmt.Fprintf(&b, "drift map: %s\n", words.Drift(m))
	}
	fmt.Fprintf(&b, "minimal case (%d shrink steps, %d tries, %v):\n%s\n", st.Steps, st.Tried, st.Elapsed.Round(1e6), js)
	fmt.Fprintf(&b, "repro: %s\n", f.Repro)
	name := "min-" + f.Signature
	fmt.Fprintf(&b, "seed file testdata/fuzz/%s/%s:\n%s", fuzzName, name, SeedFile(f.Case))
	env := ""
	if v := os.Getenv(EnvTargets); v != "" {
		env = EnvTargets + "=" + spec.ShellQuote(v) + " "
	}
	fmt.Fprintf(&b, "re-run: %sgo test -run %s ./fuzz/native\n", env, spec.ShellQuote(fuzzName+"/"+name))
	return b.String()
}
