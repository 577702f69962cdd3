package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
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

// onlyEntry opens corpus folder dir and returns it with the one name
// list gives (Dir.Certificates, Dir.ScanDrifts), failing the test where
// it gives none or more than one.
func onlyEntry(t *testing.T, dir string, list func(*corpus.Dir) ([]string, error)) (*corpus.Dir, string) {
	t.Helper()
	d, err := corpus.OpenDir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	names, err := list(d)
	if err != nil || len(names) != 1 {
		t.Fatalf("%s: %v %v, want one", dir, names, err)
	}
	return d, names[0]
}

// onlyCertificate is onlyEntry of the certificates of dir, with the
// certificate.
func onlyCertificate(t *testing.T, dir string) (*corpus.Dir, string, *spec.Certificate) {
	t.Helper()
	d, name := onlyEntry(t, dir, (*corpus.Dir).Certificates)
	c, err := d.GetCertificate(name)
	if err != nil {
		t.Fatal(err)
	}
	return d, name, c
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
