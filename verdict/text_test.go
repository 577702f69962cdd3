package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// TestVerdictText: each negative control is said once by what became of
// it (found, out of time, not found, not reached when interrupted), and
// the status lines follow the counts.
func TestVerdictText(t *testing.T) {
	found := spec.Finding{Kind: spec.KindMismatch, Relation: "batch-invariance", TargetA: "a", TargetB: "m-found",
		Elapsed: spec.Duration(2 * time.Second), ToMinimal: spec.Duration(time.Second)}
	res := &spec.Result{Cases: 10, Duration: spec.Duration(time.Second), Findings: []spec.Finding{found},
		Targets: []spec.TargetStats{{Target: "a", Cases: 10, Findings: 1, Relations: []string{"batch-invariance"}}}}
	v := &Verdict{Notes: []string{"expected: negative control"}, Controls: []string{"m-found", "m-late", "m-missed"},
		Expected: map[string][]spec.Finding{"m-found": {found}}, OutOfTime: []string{"m-late"}, Stalls: []string{"m-late ran 3 cases"}}
	for _, tc := range []struct {
		interrupted bool
		want        []string
	}{
		{false, []string{
			"10 cases in 1s (10 cases/s), 1 finding(s)",
			"finding 1: mismatch, batch-invariance on a vs m-found [expected: negative control]",
			"m-found                        found by batch-invariance in 2s (minimal after 3s): mismatch",
			"m-late                         ran out of time (STALLED below)",
			"m-missed                       NOT FOUND",
			"    a                                   10   1  batch-invariance",
			"STALLED: m-late ran 3 cases",
		}},
		{true, []string{"m-late                         not reached (interrupted)", "INTERRUPTED after 1s: the verdict covers the 10 cases run; not a pass"}},
	} {
		res.Interrupted = tc.interrupted
		var b strings.Builder
		v.Text(&b, res)
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("interrupted %v: no %q in\n%s", tc.interrupted, w, b.String())
			}
		}
	}
}
