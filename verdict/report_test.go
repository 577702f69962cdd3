package verdict

import (
	"context"
	"path/filepath"
	"strings"
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

// TestJudge: Status with its reason; a pass has none.
func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		mode                      FailOn
		unexpected, newUnexpected int
		interrupted               bool
		want                      Status
		why                       string
	}{
		{FailNone, 3, 3, true, Pass, ""},
		{FailNew, 2, 1, false, Fail, "1 new unexpected finding(s)"},
		{FailAny, 2, 1, false, Fail, "2 unexpected finding(s), 1 of them new"},
		{FailNew, 0, 0, true, Interrupted, "tonight's campaign (night.json) was interrupted: not a pass"},
	} {
		st, err := tc.mode.Judge(tc.unexpected, tc.newUnexpected, tc.interrupted, "night.json")
		if st != tc.want || (err == nil) != (tc.why == "") || (err != nil && !strings.Contains(err.Error(), tc.why)) {
			t.Errorf("%s.Judge(%d, %d, %v) = %s, %v; want %s, %q", tc.mode, tc.unexpected, tc.newUnexpected, tc.interrupted, st, err, tc.want, tc.why)
		}
	}
}
