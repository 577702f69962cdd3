package gpu

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/bitparity/bitparity/spec"
)

// Size limits of a manifest and of the files it names, checked before a
// file is read whole (docs/kernel-abi.md, "Paths").
const (
	MaxManifestBytes = 1 << 20  // the manifest file: 1 MiB
	MaxImageBytes    = 64 << 20 // one ptx, cubin or fatbin: 64 MiB
)

// ManifestOptions says where the files a manifest names may be.
type ManifestOptions struct {
	// AnyPath lets "ptx", "cubin" and "fatbin" name files outside the
	// manifest's folder: absolute paths, paths through "..", symbolic
	// links that leave the folder (run --kernel-any-path). They must still
	// be regular files within MaxImageBytes.
	AnyPath bool
}

// errOutside marks an image path that leaves the manifest's folder.
var errOutside = errors.New("outside the manifest's folder")

// readManifestFile reads the manifest at path: a regular file of at most
// MaxManifestBytes.
func readManifestFile(path string) ([]byte, error) {
	return readBounded(nil, path, MaxManifestBytes)
}

// readImage reads the file a manifest field names, rel, relative to the
// manifest's folder dir: with opts.AnyPath anywhere, otherwise only within
// dir (rel is local: not absolute, no ".." above dir, and no symbolic link
// on its way that leaves dir, which os.Root enforces). It returns the
// path it read (dir joined with rel, or rel when absolute).
func readImage(dir, rel string, opts ManifestOptions) (data []byte, path string, err error) {
	path = rel
	if !filepath.IsAbs(rel) {
		path = filepath.Join(dir, rel)
	}
	if opts.AnyPath {
		data, err = readBounded(nil, path, MaxImageBytes)
		return data, path, err
	}
	if !filepath.IsLocal(rel) {
		return nil, path, fmt.Errorf("%s: %w %s (pass --kernel-any-path to allow it)", rel, errOutside, dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, path, err
	}
	defer root.Close()
	data, err = readBounded(root, rel, MaxImageBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && isEscape(root, rel) {
		return nil, path, fmt.Errorf("%s: %w %s through a symbolic link (pass --kernel-any-path to allow it)", rel, errOutside, dir)
	}
	return data, path, err
}

// isEscape says whether rel, read within root, failed because it leaves
// root: it resolves on the plain file system but not within root.
func isEscape(root *os.Root, rel string) bool {
	_, inRoot := root.Stat(rel)
	_, plain := os.Stat(filepath.Join(root.Name(), rel))
	return inRoot != nil && plain == nil
}

// readBounded reads name (within root when root is not nil): a regular
// file of at most limit bytes. A FIFO, a device, a folder is refused
// before it is opened (opening a FIFO blocks until a writer comes); the
// open does not block either (O_NONBLOCK, should the file be swapped
// meanwhile), and the size is checked again on the open file and while
// reading, so no more than limit+1 bytes are ever read.
func readBounded(root *os.Root, name string, limit int64) ([]byte, error) {
	stat, open := os.Stat, os.OpenFile
	if root != nil {
		stat, open = root.Stat, root.OpenFile
	}
	st, err := stat(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // "statat NAME: ..." says less than NAME
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := boundedFile(name, st, limit); err != nil {
		return nil, err
	}
	f, err := open(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := boundedFile(name, st, limit); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: grew past %d bytes while it was read", name, limit)
	}
	return data, nil
}

// boundedFile checks that st, the file name, is a regular file of at most
// limit bytes.
func boundedFile(name string, st fs.FileInfo, limit int64) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s)", name, spec.FileKind(st.Mode()))
	}
	if st.Size() > limit {
		return fmt.Errorf("%s: %d bytes, over the limit of %d", name, st.Size(), limit)
	}
	return nil
}
