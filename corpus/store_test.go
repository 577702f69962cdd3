package corpus

import (
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

func mustDir(t *testing.T) *Dir {
	t.Helper()
	d, err := OpenDir(filepath.Join(t.TempDir(), "corpus"), true)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// testStore runs the Store contract on s: Put is put-if-absent, Get checks
// the name, Update keeps the name, Delete removes.
func testStore(t *testing.T, s Store) {
	t.Helper()
	f := NewFile(seedCase(1), sampleFinding(seedCase(1)), spec.Env{Bitparity: "t"}, "test")
	name, added, err := s.Put(f)
	if err != nil || !added {
		t.Fatalf("Put: %q %v %v", name, added, err)
	}
	g := NewFile(seedCase(1), nil, spec.Env{}, "other writer")
	g.Note = "must not replace the first"
	if n2, added, err := s.Put(g); err != nil || added || n2 != name {
		t.Fatalf("second Put of the same case: %q %v %v, want not added", n2, added, err)
	}
	got, err := s.Get(name)
	if err != nil || got.Note != "" || got.Finding == nil {
		t.Fatalf("Get after two Puts: %+v %v; want the first file", got, err)
	}
	if err := s.Update(name, func(f *File) error { f.Note = "rechecked"; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(name); got.Note != "rechecked" {
		t.Errorf("Update lost: note %q", got.Note)
	}
	if err := s.Update(name, func(f *File) error { f.Case.Seed++; return nil }); err == nil {
		t.Errorf("Update that changes the case succeeded")
	}
	names, err := s.List()
	if err != nil || len(names) != 1 || names[0] != name {
		t.Fatalf("List: %v %v", names, err)
	}
	if err := s.Delete(name); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(name); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete(name); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
	if _, err := s.Get("../../etc/passwd"); err == nil {
		t.Errorf("Get of a hostile name succeeded")
	}
}

// TestDirPutGetListDeleteUpdate: a folder keeps the Store contract; its
// names are case file names, a Put never overwrites a status, and a
// traversal name is refused as no case file name.
func TestDirPutGetListDeleteUpdate(t *testing.T) {
	testStore(t, mustDir(t))
	d := mustDir(t)
	f := NewFile(seedCase(1), sampleFinding(seedCase(1)), spec.Env{Bitparity: "t"}, "test")
	name, added, err := d.Put(f)
	if err != nil || !added {
		t.Fatalf("Put: %v added=%v", err, added)
	}
	if !IsName(name) {
		t.Fatalf("name %q is not a case file name", name)
	}
	// Put never overwrites: a fixed status survives a Put of the open case.
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	if err := d.Update(name, func(f *File) error {
		f.Status = Status{State: StateFixed, FixedAt: now, FixedKernelHash: "k2"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Put(f); err != nil {
		t.Fatal(err)
	}
	g, err := d.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if g.Status.State != StateFixed || g.Status.FixedKernelHash != "k2" || !g.Status.FixedAt.Equal(now) {
		t.Errorf("status %+v, want fixed at %v with k2", g.Status, now)
	}
	if _, err := d.Get("../../etc/passwd"); err == nil || !strings.Contains(err.Error(), "not a case file name") {
		t.Errorf("Get with a traversal name: %v", err)
	}
}

func TestDirIgnoresTempAndDetectsRenamed(t *testing.T) {
	d := mustDir(t)
	name, _, err := d.Put(NewFile(seedCase(2), nil, spec.Env{}, ""))
	if err != nil {
		t.Fatal(err)
	}
	// a temp file a killed writer left, and a half-written one
	os.WriteFile(filepath.Join(d.Path(), TempPrefix+"x.json-123"), []byte(`{"format":"bitp`), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(d.Path(), TempPrefix+"x.json-123"), old, old)
	names, _ := d.List()
	if len(names) != 1 {
		t.Errorf("List = %v, want only %s", names, name)
	}
	if n, err := d.CleanTemp(time.Minute); err != nil || n != 1 {
		t.Errorf("CleanTemp = %d, %v, want 1", n, err)
	}
	// a file renamed by hand no longer matches its content
	data, _ := os.ReadFile(d.PathOf(name))
	os.WriteFile(d.PathOf("0000000000000000.json"), data, 0o644)
	if _, err := d.Get("0000000000000000.json"); err == nil || !strings.Contains(err.Error(), "renamed") {
		t.Errorf("Get of a renamed file: %v", err)
	}
	entries, errs := Load(d)
	if len(entries) != 1 || len(errs) != 1 {
		t.Errorf("Load: %d entries, errors %v; want 1 and 1", len(entries), errs)
	}
}

// snapshot hashes every file under dir (names, modes and contents).
func snapshot(t *testing.T, dir string) [32]byte {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, _ := e.Info()
		h.Write([]byte(p + info.Mode().String() + "\n"))
		if e.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

func TestLayered(t *testing.T) {
	shared := mustDir(t)
	local := mustDir(t)
	inShared, _, _ := shared.Put(NewFile(seedCase(10), sampleFinding(seedCase(10)), spec.Env{}, "ci"))
	both, _, _ := shared.Put(NewFile(seedCase(11), nil, spec.Env{}, "ci"))
	if _, _, err := local.Put(NewFile(seedCase(11), nil, spec.Env{}, "me")); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, shared.Path())
	l := NewLayered(local, shared)

	names, err := l.List()
	if err != nil || len(names) != 2 {
		t.Fatalf("List = %v, %v; want the union of 2", names, err)
	}
	if f, err := l.Get(both); err != nil || f.Source != "me" {
		t.Errorf("Get of a case in both layers: %v source %q, want the local one", err, f.Source)
	}
	if _, added, err := l.Put(NewFile(seedCase(10), nil, spec.Env{}, "me")); err != nil || added {
		t.Errorf("Put of a case the shared layer holds: added=%v %v", added, err)
	}
	newName, added, err := l.Put(NewFile(seedCase(12), nil, spec.Env{}, "me"))
	if err != nil || !added {
		t.Fatalf("Put new: %v %v", added, err)
	}
	if _, err := local.Get(newName); err != nil {
		t.Errorf("new case not written to the local layer: %v", err)
	}
	// updating a shared case copies it locally with the change
	fixedAt := time.Now().UTC().Truncate(time.Second)
	if err := l.Update(inShared, func(f *File) error {
		f.Status = Status{State: StateFixed, FixedAt: fixedAt}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if f, err := l.Get(inShared); err != nil || f.Status.State != StateFixed {
		t.Errorf("layered Get after Update: %v %+v", err, f)
	}
	if f, err := shared.Get(inShared); err != nil || f.Status.State != StateOpen {
		t.Errorf("shared copy changed: %v %+v", err, f)
	}
	// deleting removes the local copy; the shared one shows through and
	// cannot be deleted
	if err := l.Delete(inShared); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(inShared); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Delete of a shared-only case: %v, want ErrReadOnly", err)
	}
	if err := ReadOnly(shared).Update(inShared, func(*File) error { return nil }); !errors.Is(err, ErrReadOnly) {
		t.Errorf("ReadOnly Update: %v", err)
	}
	if snapshot(t, shared.Path()) != before {
		t.Errorf("the shared layer was modified")
	}
}
