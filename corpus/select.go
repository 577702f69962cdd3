package corpus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/spec"
)

// OpenLayered opens the store a corpus command works on: the folder or
// bucket local (a folder is created when create) over the shared folders
// or buckets, read only (NewLayered). A missing local folder is an error
// that wraps fs.ErrNotExist.
func OpenLayered(ctx context.Context, local string, shared []string, create bool) (*Layered, error) {
	l, err := Open(ctx, local, create)
	if err != nil {
		return nil, err
	}
	ro, err := OpenAll(ctx, shared)
	if err != nil {
		return nil, fmt.Errorf("shared corpus: %w", err)
	}
	return NewLayered(l, ro...), nil
}

// OpenAll opens the folders or buckets at locs (Open), none created.
func OpenAll(ctx context.Context, locs []string) ([]Store, error) {
	ss := make([]Store, len(locs))
	for i, loc := range locs {
		s, err := Open(ctx, loc, false)
		if err != nil {
			return nil, err
		}
		ss[i] = s
	}
	return ss, nil
}

// CheckLocation opens loc when it is a bucket URL and closes it again, so
// that a wrong URL or missing credentials show before any work rather than
// after it; folders are left to their writers (which create them).
func CheckLocation(ctx context.Context, loc string) error {
	if !IsURL(loc) {
		return nil
	}
	s, err := Open(ctx, loc, false)
	if err != nil {
		return err
	}
	if c, ok := s.(io.Closer); ok {
		c.Close()
	}
	return nil
}

// Resolve finds a case by path (an existing file, read with ReadFile) or
// by name in s ("0123abcd..." with or without .json). A name s does not
// hold is an error wrapping ErrNotFound.
func Resolve(s Store, arg string) (Entry, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		f, err := ReadFile(arg)
		if err != nil {
			return Entry{}, err
		}
		name, _ := f.Name()
		return Entry{Name: name, File: f}, nil
	}
	name := strings.TrimSuffix(filepath.Base(arg), ".json") + ".json"
	f, err := s.Get(name)
	if errors.Is(err, ErrNotFound) || (err != nil && !IsName(name)) {
		return Entry{}, fmt.Errorf("%s: no such case file or case name: %w", arg, ErrNotFound)
	}
	if err != nil {
		return Entry{}, err
	}
	return Entry{Name: name, File: f}, nil
}

// Select returns the cases args name (Resolve), or every case of s (Load)
// when args is empty, with the files that did not decode in bad.
func Select(s Store, args []string) (entries []Entry, bad []error, err error) {
	if len(args) == 0 {
		entries, bad = Load(s)
		return entries, bad, nil
	}
	for _, arg := range args {
		e, err := Resolve(s, arg)
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil, nil
}

// OpenOnly returns the entries that hold an open finding, in order.
func OpenOnly(entries []Entry) []Entry {
	var kept []Entry
	for _, e := range entries {
		if e.File.Finding != nil && e.File.Status.State == StateOpen {
			kept = append(kept, e)
		}
	}
	return kept
}

// WriteBundleFile writes WriteBundle of entries to the file path,
// atomically (a reader never sees half a bundle), and returns its manifest
// and size in bytes.
func WriteBundleFile(path string, entries []Entry) (*Manifest, int64, error) {
	var m *Manifest
	err := atomicfile.WriteFunc(path, func(w io.Writer) error {
		var err error
		m, err = WriteBundle(w, entries)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	return m, info.Size(), nil
}

// ReadCase reads arg as a case as JSON (it starts with '{', as a finding's
// repro line prints it; unknown fields refused) or else as the path of a
// case file (ReadFile), and returns the case and the finding recorded
// with it (nil for JSON and for a pass file).
func ReadCase(arg string) (spec.Case, *spec.Finding, error) {
	var c spec.Case
	if !strings.HasPrefix(strings.TrimSpace(arg), "{") {
		f, err := ReadFile(arg)
		if err != nil {
			return c, nil, err
		}
		return f.Case, f.Finding, nil
	}
	dec := json.NewDecoder(strings.NewReader(arg))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, nil, fmt.Errorf("case JSON: %w", err)
	}
	return c, nil, nil
}
