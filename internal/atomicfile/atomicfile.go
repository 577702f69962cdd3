// Package atomicfile writes files so that a reader sees the old content or
// the new, never a part, and a process killed mid-write leaves no broken
// file behind (at most a temp file whose name starts with TempPrefix,
// which readers of a folder skip).
package atomicfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// TempPrefix starts the name of every temp file this package creates:
// DIR/.tmp-BASE-RANDOM beside the file it becomes.
const TempPrefix = ".tmp-"

// Write replaces path with data:
//
//	create DIR/.tmp-BASE-RANDOM (mode 0644), write, fsync, close,
//	rename over path, fsync DIR
//
// On any error the temp file is removed and path is left as it was.
func Write(path string, data []byte) error {
	return WriteFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteJSON is Write of v as JSON indented by two spaces, with a final
// newline.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return Write(path, append(b, '\n'))
}

// WriteFunc is Write with the content streamed by write (a bundle, say);
// when write fails, path is left as it was.
func WriteFunc(path string, write func(io.Writer) error) error {
	tmp, err := writeTemp(path, write)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// Create writes path only when it does not exist yet: a temp file, fsync,
// then a hard link to path (which fails atomically when path exists), then
// the temp file is removed. It reports created=false when the name was
// already there, whoever wrote it. Where hard links are not supported it
// falls back to a rename after an existence check (two writers of the same
// name may then race; both wrote the same content when names are content
// hashes).
func Create(path string, data []byte) (created bool, err error) {
	if _, err := os.Lstat(path); err == nil {
		return false, nil
	}
	tmp, err := writeTemp(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp)
	err = os.Link(tmp, path)
	switch {
	case err == nil:
		syncDir(filepath.Dir(path))
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	}
	if _, serr := os.Lstat(path); serr == nil {
		return false, nil
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	syncDir(filepath.Dir(path))
	return true, nil
}

// writeTemp streams write into a new temp file beside path and fsyncs it:
//
//	create DIR/.tmp-BASE-RANDOM (O_EXCL, mode 0644), write, fsync, close
//
// It returns the temp path; on error the temp file is removed.
func writeTemp(path string, write func(io.Writer) error) (string, error) {
	fh, err := os.CreateTemp(filepath.Dir(path), TempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return "", err
	}
	tmp := fh.Name()
	err = fh.Chmod(0o644)
	if err == nil {
		err = write(fh)
	}
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// syncDir fsyncs a folder so that a rename or link in it is durable; some
// filesystems cannot sync a folder, which is tolerated.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// Remove removes path and fsyncs its folder, so that the removal is as
// durable as a Write.
func Remove(path string) error {
	if err := os.Remove(path); err != nil {
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// Writable prepares path for a file Write will put there later: it
// creates the parent folder and refuses a path that is a folder or
// another non-regular file, or a folder it cannot create a file in, so a
// bad path fails before any work instead of after it.
func Writable(path string) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	probe, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".probe-*")
	if err != nil {
		return fmt.Errorf("cannot write there: %w", err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}
