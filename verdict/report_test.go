package verdict

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestCorpusFindings: the open findings of a corpus, and the identities
// of those marked fixed; a missing folder is an error.
func TestCorpusFindings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	_, open, fixed := openAndFixed(t, dir)
	found, ids, err := CorpusFindings(context.Background(), dir)
	if err != nil || len(found) != 1 || found[0].TargetA != open.TargetA || len(ids) != 1 || !ids[spec.Identity(fixed)] {
		t.Errorf("CorpusFindings = %d open, fixed %v, %v; want %s open and %s fixed", len(found), ids, err, open.TargetA, fixed.TargetA)
	}
	if _, _, err := CorpusFindings(context.Background(), filepath.Join(dir, "none")); err == nil {
		t.Errorf("CorpusFindings of a missing folder: no error")
	}
}
