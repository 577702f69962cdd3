package explain

import (
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestCase: a finding with a map is taken as it is; a case that holds has
// nothing to explain; only a mismatch has a schedule to infer.
func TestCase(t *testing.T) {
	ctx := context.Background()
	f := finding(driftCases[0])
	f.Kind = "mismatch"
	if got, err := Case(ctx, f.Case, f, nil...); got != f || err != nil {
		t.Errorf("Case of a mapped finding = %v, %v; want it back", got, err)
	}
	crash := *f
	crash.Kind = "crash"
	if _, err := Case(ctx, crash.Case, &crash); err == nil || !strings.Contains(err.Error(), "a crash finding has no schedule to infer") {
		t.Errorf("Case of a crash: %v", err)
	}
	holds := f.Case
	holds.Targets = []string{"oracle-rmsnorm"}
	holds.Shape.Rows, holds.Shape.Hidden, holds.Seed, holds.Rel = 2, 8, 1, spec.RelParams{Batch: 3}
	if _, err := Case(ctx, holds, nil); err == nil || !strings.Contains(err.Error(), "nothing to explain") {
		t.Errorf("Case of a case that holds: %v", err)
	}
}

// TestAll: findings that are not mismatches are left alone; one that
// cannot be mapped (its target does not exist) is an error naming its
// number.
func TestAll(t *testing.T) {
	f := finding(driftCases[0])
	f.Kind, f.DriftMap = "mismatch", nil
	f.Case.Targets = []string{"no-such-target"}
	fs := []spec.Finding{{Kind: "crash"}, *f}
	errs := All(context.Background(), fs)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "explain: finding 2: ") || fs[0].Explanation != "" {
		t.Errorf("All = %v", errs)
	}
}
