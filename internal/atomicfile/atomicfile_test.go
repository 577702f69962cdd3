package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	for _, content := range []string{"first\n", "second, longer\n"} {
		if err := Write(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read back %q, %v; want %q", got, err, content)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("folder holds %d entries, want only the file: %v", len(entries), entries)
	}
}

func TestWriteErrorKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := Write(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	// a path whose folder does not exist fails before touching anything
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x")); err == nil {
		t.Fatal("write into a missing folder succeeded")
	}
	// replacing a folder by a file fails at the rename; the folder stays
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(sub, []byte("x")); err == nil {
		t.Fatal("replacing a non-empty folder succeeded")
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("old file changed: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("a temp file was left behind: %v", entries)
	}
}

// TestWritable: a file path in a new folder is writable (the folder is
// made, no probe is left); a folder is not.
func TestWritable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new", "result.json")
	if err := Writable(path); err != nil {
		t.Fatalf("Writable(%s): %v", path, err)
	}
	if left, _ := os.ReadDir(filepath.Dir(path)); len(left) != 0 {
		t.Errorf("Writable left %v", left)
	}
	if err := Writable(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Writable(a folder) = %v, want not a regular file", err)
	}
}

// TestWriteJSON: the file is v indented by two spaces with a final
// newline; a value JSON cannot encode is an error and leaves no file.
func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.json")
	if err := WriteJSON(path, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "{\n  \"a\": 1\n}\n" {
		t.Errorf("WriteJSON wrote %q, %v", b, err)
	}
	bad := filepath.Join(filepath.Dir(path), "bad.json")
	if err := WriteJSON(bad, func() {}); err == nil {
		t.Error("WriteJSON of a func: no error")
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("WriteJSON of a func left %s: %v", bad, err)
	}
}
