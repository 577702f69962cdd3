package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadLimitedRefuses: ReadFile and the other readers of untrusted files
// (readLimitedN) refuse a folder and a file over their limit, naming it.
func TestReadLimitedRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadFile(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ReadFile of a folder: %v", err)
	}
	p := filepath.Join(dir, "x.json")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readLimitedN(p, 4); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "at most 4") {
		t.Errorf("5 bytes with a limit of 4: %v", err)
	}
	if b, err := readLimitedN(p, 5); err != nil || string(b) != "12345" {
		t.Errorf("5 bytes with a limit of 5: %q, %v", b, err)
	}
}
