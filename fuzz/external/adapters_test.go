package external

import (
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestMissing: an exec: target no --exec started is named once, with the
// command line recorded with the case when there is one; registered
// targets are not.
func TestMissing(t *testing.T) {
	c := spec.Case{Targets: []string{"oracle-rmsnorm", "exec:nobody-started-this", "exec:recorded-here"}}
	rec := []spec.Adapter{{Target: "exec:recorded-here", Name: "recorded-here", Device: "cpu", Exec: "python3 a.py"}}
	got := Missing(c, rec)
	if len(got) != 2 {
		t.Fatalf("Missing = %q, want two lines", got)
	}
	if !strings.Contains(got[0], `none was recorded with the case: pass --exec with the command line of the adapter whose hello names "nobody-started-this"`) {
		t.Errorf("unrecorded: %q", got[0])
	}
	if !strings.Contains(got[1], "(recorded-here on cpu): pass --exec 'python3 a.py'") {
		t.Errorf("recorded: %q", got[1])
	}
	if d := Differ(rec); len(d) != 0 {
		t.Errorf("Differ with no adapter running here = %q, want none", d)
	}
}
