package corpus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TempPrefix starts the name of every temp file a writer creates. Readers
// ignore such names (IsName is false for them); a writer killed between
// create and rename leaves one behind, and Dir.CleanTemp removes old ones.
const TempPrefix = ".tmp-"

// writeTemp writes data to a new temp file in dir and fsyncs it:
//
//	create dir/.tmp-NAME-RANDOM (O_EXCL, mode 0644), write, fsync, close
//
// It returns the temp path; on error the temp file is removed.
func writeTemp(dir, name string, data []byte) (string, error) {
	fh, err := os.CreateTemp(dir, TempPrefix+name+"-*")
	if err != nil {
		return "", err
	}
	tmp := fh.Name()
	fail := func(err error) (string, error) {
		fh.Close()
		os.Remove(tmp)
		return "", err
	}
	if err := fh.Chmod(0o644); err != nil {
		return fail(err)
	}
	if _, err := fh.Write(data); err != nil {
		return fail(err)
	}
	if err := fh.Sync(); err != nil {
		return fail(err)
	}
	if err := fh.Close(); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// syncDir fsyncs a directory so that a rename or link in it is durable.
// Filesystems that cannot sync a directory are tolerated.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// writeAtomic replaces dir/name with data: temp file in dir, fsync,
// rename over name, fsync dir. Readers see the old file or the new one,
// never a part.
func writeAtomic(dir, name string, data []byte) error {
	tmp, err := writeTemp(dir, name, data)
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	syncDir(dir)
	return nil
}

// createAtomic writes dir/name only when it does not exist yet: temp file,
// fsync, then a hard link to name (which fails atomically when name
// exists), then the temp file is removed. It reports created=false when the
// name was already there, whoever wrote it. Where hard links are not
// supported it falls back to a rename after an existence check (a race
// between two writers of the same name then keeps one of two equal cases).
func createAtomic(dir, name string, data []byte) (created bool, err error) {
	final := filepath.Join(dir, name)
	if _, err := os.Lstat(final); err == nil {
		return false, nil
	}
	tmp, err := writeTemp(dir, name, data)
	if err != nil {
		return false, fmt.Errorf("write %s: %w", final, err)
	}
	defer os.Remove(tmp)
	err = os.Link(tmp, final)
	switch {
	case err == nil:
		syncDir(dir)
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	}
	if _, serr := os.Lstat(final); serr == nil {
		return false, nil
	}
	if err := os.Rename(tmp, final); err != nil {
		return false, fmt.Errorf("write %s: %w", final, err)
	}
	syncDir(dir)
	return true, nil
}

// isTemp reports whether base is a temp file name of this package.
func isTemp(base string) bool { return strings.HasPrefix(base, TempPrefix) }

// tempOlder lists temp files in dir last modified before cutoff.
func tempOlder(dir string, cutoff time.Time) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !isTemp(e.Name()) {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(cutoff) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}
