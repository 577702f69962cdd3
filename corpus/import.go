package corpus

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Import stores in s what paths hold: the findings of campaign result
// files (the .json paths: ReadResult, ImportResult) first, then the go
// test -fuzz inputs and folders of them (the other paths: ImportGoFuzz
// with opts). It writes one line per case added, held or skipped on out,
// one per refusal on warn, and the counts of each result file and of the
// go fuzz inputs (into names s in them), and returns how many findings
// and inputs it refused. The error is for a result file that does not
// read or a path that cannot be read at all; what was stored before it
// stays stored.
func Import(ctx context.Context, s Store, into string, paths []string, opts GoFuzzOptions, out, warn io.Writer) (refused int, err error) {
	var fuzzPaths []string
	for _, p := range paths {
		if !strings.HasSuffix(p, ".json") {
			fuzzPaths = append(fuzzPaths, p)
			continue
		}
		r, err := ReadResult(p)
		if err != nil {
			return refused, err
		}
		added, existing, errs := ImportResult(s, r)
		for _, n := range added {
			fmt.Fprintf(out, "added %s from %s\n", n, p)
		}
		for _, err := range errs {
			fmt.Fprintf(warn, "refused %s: %v\n", p, err)
		}
		refused += len(errs)
		fmt.Fprintf(out, "imported %d finding(s) of %s: %d added, %d already there, %d refused\n",
			len(r.Findings), p, len(added), len(existing), len(errs))
	}
	if len(fuzzPaths) == 0 {
		return refused, nil
	}
	res, err := ImportGoFuzz(ctx, s, fuzzPaths, opts)
	if err != nil {
		return refused, err
	}
	return refused + writeGoFuzzImport(out, warn, res, into, refused), nil
}

// writeGoFuzzImport writes one line per go fuzz input imported into the
// store into and the counts (refusedBefore: the result files' refused
// findings, counted with the inputs), and returns how many inputs it
// refused.
func writeGoFuzzImport(out, warn io.Writer, res []GoFuzzResult, into string, refusedBefore int) int {
	var bad, added, findings int
	for _, r := range res {
		switch {
		case r.Err != nil:
			bad++
			fmt.Fprintf(warn, "refused %s: %v\n", r.Path, r.Err)
		case r.Name != "" && r.Added:
			added++
			what := "pass case"
			if r.Finding != "" {
				findings++
				what = r.Finding
			}
			fmt.Fprintf(out, "added %s (%s) from %s\n", r.Name, what, r.Path)
		case r.Name != "":
			if r.Finding != "" {
				findings++
			}
			fmt.Fprintf(out, "have  %s from %s\n", r.Name, r.Path)
		default:
			fmt.Fprintf(out, "skipped %s: %s\n", r.Path, r.Skipped)
		}
	}
	fmt.Fprintf(out, "imported %d go fuzz input(s) into %s: %d added, %d finding(s), %d refused, %d skipped\n",
		len(res), into, added, findings, refusedBefore+bad, len(res)-added-bad-refusedBefore)
	return bad
}

// GoCacheFuzzDir is $GOCACHE/fuzz, where go test -fuzz keeps the inputs it
// generated ($GOCACHE defaults to the user cache dir's go-build).
func GoCacheFuzzDir() (string, error) {
	c := os.Getenv("GOCACHE")
	if c == "" {
		uc, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("GOCACHE is not set and there is no user cache dir: %w", err)
		}
		c = filepath.Join(uc, "go-build")
	}
	return filepath.Join(c, "fuzz"), nil
}
