package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// dying is the oracle RMSNorm in a process that dies at its
// BITPARITY_TEST_DIE_AT-th request: a crash caused by the adapter's state,
// not by the case.
type dying struct{ served *atomic.Int64 }

func (dying) Info() target.Info {
	i := mustLookup("oracle-rmsnorm").Info()
	i.Name, i.Models = "test-dying-rmsnorm", "oracle RMSNorm whose process dies at its BITPARITY_TEST_DIE_AT-th request (test only)"
	return i
}

func (d dying) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	var at int64
	fmt.Sscan(os.Getenv("BITPARITY_TEST_DIE_AT"), &at)
	if n := d.served.Add(1); at > 0 && n == at {
		fmt.Fprintf(os.Stderr, "test-dying-rmsnorm: request %d: dying\n", n)
		os.Exit(3)
	}
	return mustLookup("oracle-rmsnorm").Run(ctx, b, rows)
}

func init() {
	target.Register("test-dying-rmsnorm", func() (target.Target, error) { return dying{new(atomic.Int64)}, nil })
}

// TestFlakyCrash: a process target that dies at its 12th request gives a
// campaign a crash finding whose case runs clean on a fresh process.
// corpus recheck replays it corpus.FlakyReplays times, reports it flaky
// with the count (exit 1) and leaves it open, never fixed; repro says
// FLAKY with the count, not COULD NOT REPRODUCE.
func TestFlakyCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	adapter := "BITPARITY_TEST_DIE_AT=12 exec " + spec.ShellQuote(exe) + " worker --target test-dying-rmsnorm"
	out, errs, code := cli(t, dir, "run", "--exec", adapter, "--relations", "determinism", "--max-cases", "40",
		"--workers", "1", "--no-shrink", "--seed", "2", "--corpus", "c", "--json", "r.json")
	if code != spec.ExitFinding || !strings.Contains(out, "crash") {
		t.Fatalf("run: exit %d, want 1 with a crash finding\n%s\n%s", code, out, errs)
	}
	d, err := corpus.OpenDir(filepath.Join(dir, "c"), false)
	if err != nil {
		t.Fatal(err)
	}
	entries, lerrs := corpus.Load(d)
	if len(lerrs) > 0 {
		t.Fatal(lerrs)
	}
	var crash string
	for _, e := range entries {
		if e.File.Finding != nil && e.File.Finding.Kind == spec.KindCrash {
			crash = e.Name
		}
	}
	if crash == "" {
		t.Fatalf("no crash case stored (%d case files)\n%s", len(entries), out)
	}
	out, errs, code = cli(t, dir, "corpus", "recheck", "--exec", adapter, "c")
	want := fmt.Sprintf("flaky         %s (the recorded crash showed on 0 of %d replays; kept open)", crash, corpus.FlakyReplays)
	if code != spec.ExitFinding || !strings.Contains(out, want) || strings.Contains(out, "fixed         "+crash) {
		t.Fatalf("corpus recheck: exit %d, want 1 and %q\n%s\n%s", code, want, out, errs)
	}
	f, err := d.Get(crash)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status.State != corpus.StateOpen {
		t.Fatalf("after recheck the flaky crash is %q, want open", f.Status.State)
	}
	out, errs, code = cli(t, dir, "repro", "--exec", adapter, filepath.Join("c", crash))
	if code != spec.ExitNotReproduced || !strings.Contains(out, fmt.Sprintf("FLAKY: the recorded crash showed on 0 of %d replays", corpus.FlakyReplays)) ||
		strings.Contains(out, "COULD NOT REPRODUCE") {
		t.Fatalf("repro: exit %d, want %d and FLAKY\n%s\n%s", code, spec.ExitNotReproduced, out, errs)
	}
}
