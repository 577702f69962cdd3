package verdict

import (
	"strings"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
)

// TestMissingAdapters: an open finding on an exec: target no --exec
// started is listed, with the command line recorded with it; a fixed one
// only with all; a case on registered targets never.
func TestMissingAdapters(t *testing.T) {
	d, err := corpus.OpenDir(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	put := func(targets []string, state string, seed uint64) string {
		fd := finding(targets[0], false, 2)
		fd.Case.Seed = seed
		f := corpus.NewFile(fd.Case, &fd, spec.Env{}, "test")
		if f.Status.State = state; state == corpus.StateFixed {
			f.Status.FixedAt, f.Status.FixedEnv = f.Created, &spec.Env{}
		}
		if targets[0] == "exec:nowhere" {
			f.Adapters = []spec.Adapter{{Target: "exec:nowhere", Name: "nowhere", Exec: "python3 adapter.py"}}
		}
		name, _, err := d.Put(f)
		if err != nil {
			t.Fatal(err)
		}
		return name
	}
	open := put([]string{"exec:nowhere"}, corpus.StateOpen, 1)
	fixed := put([]string{"exec:nowhere"}, corpus.StateFixed, 2)
	put([]string{"oracle-rmsnorm"}, corpus.StateOpen, 3)
	for _, tc := range []struct {
		all  bool
		want []string
	}{
		{false, []string{open}},
		{true, []string{open, fixed}},
	} {
		lines, err := MissingAdapters(d, tc.all)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != len(tc.want) {
			t.Fatalf("MissingAdapters(all=%v) = %q, want one line for each of %q", tc.all, lines, tc.want)
		}
		for _, l := range lines {
			if !strings.Contains(l, "python3 adapter.py") {
				t.Errorf("line %q does not name the recorded command line", l)
			}
		}
		for _, n := range tc.want {
			if !strings.Contains(strings.Join(lines, "\n"), n+": target exec:nowhere") {
				t.Errorf("MissingAdapters(all=%v) = %q, want a line for %s", tc.all, lines, n)
			}
		}
	}
}
