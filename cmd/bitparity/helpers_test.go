package main

import (
	"encoding/json"
	"os"
	"testing"
)

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
