package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bitparity/bitparity/internal/atomicfile"
)

// TempPrefix starts the name of every temp file a writer creates
// (atomicfile.TempPrefix). Readers ignore such names (IsName is false for
// them); a writer killed between create and rename leaves one behind, and
// Dir.CleanTemp removes old ones.
const TempPrefix = atomicfile.TempPrefix

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
