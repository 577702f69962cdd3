// Package atomicfile writes files so that a reader sees the old content or
// the new, never a part, and a process killed mid-write leaves no broken
// file behind.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data:
//
//	create DIR/.BASE.tmp-RANDOM (mode 0644), write, fsync, close,
//	rename over path, fsync DIR
//
// On any error the temp file is removed and path is left as it was.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Chmod(0o644)
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(name, path)
	}
	if werr != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // make the rename durable; some filesystems cannot sync a folder
		d.Close()
	}
	return nil
}
