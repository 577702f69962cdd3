// Package golden holds a test's output to a file under testdata/: with the
// package's -update flag the file is rewritten from the output instead.
// Each test package keeps its own -update flag and passes its value.
package golden

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Check compares got with the file at path, byte for byte. With update it
// writes got to path (creating its folder) and reports true. It reports
// whether the file holds got; a missing file fails the test at once.
func Check(t testing.TB, path string, got []byte, update bool) bool {
	t.Helper()
	if update {
		write(t, path, got)
		return true
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (rerun the test with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-file +now; rerun with -update if the change is intended):\n%s", path, d)
		return false
	}
	return true
}

// JSON compares got with the JSON file at path by value (the file's
// spacing does not matter): the file is decoded into a T and compared with
// cmp.Diff. With update it writes got as indented JSON, HTML characters
// unescaped, and reports true.
func JSON[T any](t testing.TB, path string, got T, update bool) bool {
	t.Helper()
	if update {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(got); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		write(t, path, b.Bytes())
		return true
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (rerun the test with -update to create it)", err)
	}
	var want T
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s differs (-file +now; rerun with -update if the change is intended):\n%s", path, d)
		return false
	}
	return true
}

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
