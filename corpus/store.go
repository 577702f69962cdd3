package corpus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/spec"
)

// ErrNotFound is returned by Get, Update and Delete for a name a store
// does not hold; ErrReadOnly by the writes of a read-only store.
var (
	ErrNotFound = errors.New("case not found")
	ErrReadOnly = errors.New("store is read-only")
)

// Store holds case files by name (CaseHash + ".json").
type Store interface {
	// Put stores f under its name unless the store already holds that
	// name; added says whether it was new. Nothing stored is ever
	// overwritten by Put.
	Put(f *File) (name string, added bool, err error)
	// Get reads the file stored under name.
	Get(name string) (*File, error)
	// List returns the stored names, sorted.
	List() ([]string, error)
	// Delete removes name.
	Delete(name string) error
	// Update reads name, applies fn and writes the result back atomically.
	// fn may change anything but the case (the name would change).
	Update(name string, fn func(*File) error) error
}

// Dir is a folder store: one file per case, named by its content hash,
// written atomically (atomic.go). Any number of goroutines and processes may
// Put into one folder at once; each Put is all or nothing. Concurrent
// Updates of the same name keep the last one written.
type Dir struct {
	path string
}

// OpenDir opens the folder store at path, creating the folder when create
// is true.
func OpenDir(path string, create bool) (*Dir, error) {
	if create {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, fmt.Errorf("corpus folder: %w", err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("corpus folder: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("corpus folder %s: not a directory", path)
	}
	return &Dir{path: path}, nil
}

// Path returns the folder of the store.
func (d *Dir) Path() string { return d.path }

// PathOf returns the path of name in the folder.
func (d *Dir) PathOf(name string) string { return filepath.Join(d.path, name) }

func checkName(name string) error {
	if !IsName(name) {
		return fmt.Errorf("%q is not a case file name (16 lowercase hex digits and .json)", truncate(name))
	}
	return nil
}

// Put stores f under its name. Something already under that name counts
// as stored only when it is a case file of that name (Dir.verify); anything
// else there (a truncated or zeroed file, a link, a file of another case)
// is replaced by f atomically, and added is true. An entry that cannot be
// replaced (a folder) is an error: the case is stored or Put fails.
func (d *Dir) Put(f *File) (string, bool, error) {
	name, data, err := encodeNamed(f)
	if err != nil {
		return "", false, err
	}
	path := d.PathOf(name)
	added, err := atomicfile.Create(path, data)
	if err != nil || added {
		return name, added, err
	}
	bad := d.verify(name)
	if bad == nil {
		return name, false, nil
	}
	if err := atomicfile.Write(path, data); err != nil {
		return "", false, fmt.Errorf("%s holds no case file (%v) and could not be replaced: %w", path, bad, err)
	}
	return name, true, nil
}

// verify returns nil when the entry under name is a case file of that
// name: a regular file, not a link, that decodes and whose case hashes to
// name; else why it is not.
func (d *Dir) verify(name string) error {
	st, err := os.Lstat(d.PathOf(name))
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s, not a regular file", spec.FileKind(st.Mode()))
	}
	_, err = d.Get(name)
	return err
}

// Get reads name and checks that its case hashes to name (a file renamed or
// edited by hand is an error, not silently another case). A symbolic link
// under name is followed when it resolves to a file inside the folder
// (Dir.resolve) and refused otherwise.
func (d *Dir) Get(name string) (*File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	path, data, err := d.readEntry(name)
	if err != nil {
		return nil, err
	}
	f, err := Decode(filepath.Clean(path), data)
	if err != nil {
		return nil, err
	}
	return named(d.PathOf(name), name, f)
}

// readEntry reads the folder's entry name (a symbolic link followed
// within the folder only, Dir.resolve): at most spec.MaxFileBytes, and
// ErrNotFound where there is none. It returns the path it read.
func (d *Dir) readEntry(name string) (string, []byte, error) {
	path, err := d.resolve(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("%s: %w", d.PathOf(name), ErrNotFound)
	}
	if err != nil {
		return "", nil, err
	}
	data, err := readLimited(path)
	return path, data, err
}

// resolve returns the path to read the entry name from: the entry itself,
// or, for a symbolic link, the file it resolves to when that lies inside
// the folder. A link that leaves the folder, loops or dangles is an error
// naming it (never fs.ErrNotExist: a dangling link is not an absent case).
func (d *Dir) resolve(name string) (string, error) {
	path := d.PathOf(name)
	st, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if st.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	to, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s: a symbolic link that does not resolve (%v): refused", path, errors.Unwrap(err))
	}
	root, err := filepath.EvalSymlinks(d.path)
	if err != nil {
		return "", fmt.Errorf("corpus folder: %v", err)
	}
	if rel, err := filepath.Rel(root, to); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: a symbolic link to %s, outside the corpus folder: refused (copy the file into the folder)", path, to)
	}
	return to, nil
}

// named returns f when its case hashes to name, the name it was stored
// under at where; else an error (a file renamed or its case edited by hand
// is an error, not silently another case).
func named(where, name string, f *File) (*File, error) {
	if got, _ := f.Name(); got != name {
		return nil, fmt.Errorf("%s: case hashes to %s: the file was renamed or its case edited", where, got)
	}
	return f, nil
}

// List returns the names of the folder's entries that are named like case
// files, sorted, whatever their type: a link or a folder under a case
// file's name is listed, so that Get reports it instead of it being
// skipped in silence. Temp files and other names are ignored.
func (d *Dir) List() ([]string, error) {
	return listNamed(d.path, IsName)
}

// listNamed returns the names of the entries of dir for which named is
// true, sorted.
func listNamed(dir string, named func(string) bool) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("corpus folder: %w", err)
	}
	var names []string
	for _, e := range ents {
		if named(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func (d *Dir) Delete(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	err := atomicfile.Remove(d.PathOf(name))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", d.PathOf(name), ErrNotFound)
	}
	return err
}

func (d *Dir) Update(name string, fn func(*File) error) error {
	data, err := updated(d, name, name, fn)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(d.path, name), data)
}

// encodeNamed returns f's name (its case's hash) and f encoded, for a Put.
func encodeNamed(f *File) (string, []byte, error) {
	data, err := Encode(f)
	if err != nil {
		return "", nil, err
	}
	name, err := f.Name()
	if err != nil {
		return "", nil, err
	}
	return name, data, nil
}

// updated reads the file stored as name in s (at where, for the error),
// applies fn to it and returns it encoded; fn must not change the case,
// whose hash is the name.
func updated(s Store, name, where string, fn func(*File) error) ([]byte, error) {
	f, err := s.Get(name)
	if err != nil {
		return nil, err
	}
	if err := fn(f); err != nil {
		return nil, err
	}
	if got, _ := f.Name(); got != name {
		return nil, fmt.Errorf("update %s: the case changed (now %s): store it with Put", where, got)
	}
	return Encode(f)
}

// CleanTemp removes temp files older than age: those a killed writer left
// behind. A live writer's temp file is seconds old, so an age of a minute or
// more never races with one. It returns how many it removed.
func (d *Dir) CleanTemp(age time.Duration) (int, error) {
	old, err := tempOlder(d.path, time.Now().Add(-age))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range old {
		if os.Remove(p) == nil {
			n++
		}
	}
	return n, nil
}

// readOnly wraps a store and refuses writes.
type readOnly struct{ s Store }

// ReadOnly returns s with Put, Delete and Update refused with ErrReadOnly.
func ReadOnly(s Store) Store { return readOnly{s} }

func (r readOnly) Put(*File) (string, bool, error)        { return "", false, ErrReadOnly }
func (r readOnly) Get(name string) (*File, error)         { return r.s.Get(name) }
func (r readOnly) List() ([]string, error)                { return r.s.List() }
func (r readOnly) Delete(string) error                    { return ErrReadOnly }
func (r readOnly) Update(string, func(*File) error) error { return ErrReadOnly }

// Layered reads a local writable store together with shared read-only
// ones, the way teams share without clobbering each other (Hypothesis'
// Multiplexed(local, ReadOnly(shared))): Get looks in Local, then in each
// Shared store in order; List is the union; Put, Update and Delete go to
// Local only. Updating a case that only a shared store holds copies it to
// Local with the change (the local copy then shadows the shared one);
// deleting one is ErrReadOnly. Shared stores are never written. Local is a
// folder or a bucket (Open).
type Layered struct {
	Local  Store
	Shared []Store
}

// NewLayered returns a Layered store; each shared store is wrapped in
// ReadOnly.
func NewLayered(local Store, shared ...Store) *Layered {
	l := &Layered{Local: local}
	for _, s := range shared {
		l.Shared = append(l.Shared, ReadOnly(s))
	}
	return l
}

// Put adds f to Local unless Local or a shared store already holds it.
func (l *Layered) Put(f *File) (string, bool, error) {
	name, err := f.Name()
	if err != nil {
		return "", false, err
	}
	for _, s := range l.Shared {
		if _, err := s.Get(name); err == nil {
			return name, false, nil
		}
	}
	return l.Local.Put(f)
}

func (l *Layered) Get(name string) (*File, error) {
	f, err := l.Local.Get(name)
	if !errors.Is(err, ErrNotFound) {
		return f, err
	}
	for _, s := range l.Shared {
		f, err := s.Get(name)
		if !errors.Is(err, ErrNotFound) {
			return f, err
		}
	}
	return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
}

func (l *Layered) List() ([]string, error) {
	names, err := l.Local.List()
	if err != nil {
		return nil, err
	}
	for _, s := range l.Shared {
		more, err := s.List()
		if err != nil {
			return nil, err
		}
		names = append(names, more...)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

func (l *Layered) Delete(name string) error {
	err := l.Local.Delete(name)
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	for _, s := range l.Shared {
		if _, gerr := s.Get(name); gerr == nil {
			return fmt.Errorf("%s is in a shared store: %w", name, ErrReadOnly)
		}
	}
	return err
}

func (l *Layered) Update(name string, fn func(*File) error) error {
	err := l.Local.Update(name, fn)
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	f, err := l.Get(name)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		return err
	}
	if got, _ := f.Name(); got != name {
		return fmt.Errorf("update %s: the case changed (now %s): store it with Put", name, got)
	}
	_, added, err := l.Local.Put(f)
	if err == nil && !added { // a local copy appeared meanwhile: change that one
		return l.Local.Update(name, fn)
	}
	return err
}

// Entry is one readable file of a store.
type Entry struct {
	Name string
	File *File
}

// Load reads every file of s. Files that fail to read or decode are
// reported in errs (each error names its file) and skipped.
func Load(s Store) (entries []Entry, errs []error) {
	names, err := s.List()
	if err != nil {
		return nil, []error{err}
	}
	for _, n := range names {
		f, err := s.Get(n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		entries = append(entries, Entry{Name: n, File: f})
	}
	return entries, errs
}
