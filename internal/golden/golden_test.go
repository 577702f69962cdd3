package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// recorder is a testing.TB that keeps what the helper reports.
type recorder struct {
	testing.TB
	errors, fatals []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// Fatalf records and ends the calling goroutine, as testing.T's does.
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// call runs f on its own goroutine so that a Fatalf ends only f.
func call(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testdata", "out.txt")
	r := &recorder{TB: t}
	call(func() { Check(r, path, []byte("a\n"), false) })
	if len(r.fatals) != 1 {
		t.Fatalf("missing file: fatals %q, want one", r.fatals)
	}
	if !Check(t, path, []byte("a\n"), true) {
		t.Fatal("update reported a difference")
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\n" {
		t.Fatalf("update wrote %q, %v", b, err)
	}
	if !Check(t, path, []byte("a\n"), false) {
		t.Fatal("same bytes reported as different")
	}
	r = &recorder{TB: t}
	if Check(r, path, []byte("b\n"), false) || len(r.errors) != 1 {
		t.Fatalf("other bytes: errors %q, want one", r.errors)
	}
}

func TestJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	got := map[string][]string{"<a>": {"3f80", "0000"}}
	JSON(t, path, got, true)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"<a>\": [\n    \"3f80\",\n    \"0000\"\n  ]\n}\n"; string(b) != want {
		t.Fatalf("update wrote %q, want %q", b, want)
	}
	// The file's spacing does not matter, its values do.
	if err := os.WriteFile(path, []byte(`{"<a>":["3f80","0000"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if !JSON(t, path, got, false) {
		t.Fatal("same values reported as different")
	}
	r := &recorder{TB: t}
	if JSON(r, path, map[string][]string{"<a>": {"3f80"}}, false) || len(r.errors) != 1 {
		t.Fatalf("other values: errors %q, want one", r.errors)
	}
}
