//go:build unix

package verdict

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
)

// TestRecorderLocksJSON: a second Recorder on the same result file is
// refused (ErrLocked, naming the holder's process) and leaves the first's
// live journal where it is; after Finish the lock file is gone and the
// result file can be recorded again.
func TestRecorderLocksJSON(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "r.json")
	head := spec.Result{Version: spec.ResultVersion, Seed: 7}
	first, err := NewRecorder(RecorderOptions{JSON: jsonPath, Head: head})
	if err != nil {
		t.Fatal(err)
	}
	journal := jsonPath + corpus.JournalSuffix
	_, err = NewRecorder(RecorderOptions{JSON: jsonPath, Head: head})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second recorder: %v, want ErrLocked naming process %d", err, os.Getpid())
	}
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("the first recorder's journal: %v", err)
	}
	if names, _ := filepath.Glob(journal + ".*"); len(names) > 0 {
		t.Fatalf("the refused recorder moved the live journal aside: %v", names)
	}
	res := head
	if err := first.Finish(&res); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(jsonPath + LockSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file after Finish: %v", err)
	}
	again, err := NewRecorder(RecorderOptions{JSON: jsonPath, Head: head})
	if err != nil {
		t.Fatalf("after Finish: %v", err)
	}
	again.Finish(&res)
}

// TestRecorderMovesAside: a journal left by a killed run is moved aside
// under corpus.AsideName, never over another moved aside in the same
// second, and the logged command names a result file that is not a
// journal.
func TestRecorderMovesAside(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "r.json")
	journal := jsonPath + corpus.JournalSuffix
	var log strings.Builder
	for range 2 {
		if err := os.WriteFile(journal, []byte("left by a killed run\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := NewRecorder(RecorderOptions{JSON: jsonPath, Head: spec.Result{Version: spec.ResultVersion}, Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		r.Finish(&spec.Result{Version: spec.ResultVersion})
	}
	aside, _ := filepath.Glob(journal + ".interrupted-*")
	if len(aside) != 2 {
		t.Fatalf("moved aside: %v, want two journals\n%s", aside, log.String())
	}
	for _, a := range aside {
		if !corpus.IsJournal(a) {
			t.Errorf("%s is not a journal to corpus.IsJournal", a)
		}
		out := recoveredName(jsonPath, journal, a)
		if corpus.IsJournal(out) || !strings.HasSuffix(out, ".json") || !strings.Contains(log.String(), "bitparity merge --json "+out+" "+a) {
			t.Errorf("recovery of %s: %s\n%s", a, out, log.String())
		}
	}
}
