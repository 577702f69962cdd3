package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitparity/bitparity/corpus"
)

// onlyCaseFile returns the path and the content of the one JSON file in
// corpus folder dir, a case file, failing the test where there is none,
// more than one, or one the corpus does not read.
func onlyCaseFile(t *testing.T, dir string) (string, *corpus.File) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(names) != 1 {
		t.Fatalf("corpus: %v %v, want one case file", names, err)
	}
	f, err := corpus.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	return names[0], f
}

// readJSON reads the file at path and decodes it into a T, failing the
// test on a read or decode error.
func readJSON[T any](t *testing.T, path string) T {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}
