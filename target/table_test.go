package target

import (
	"bytes"
	"strings"
	"testing"
)

// TestInvariance: yes for an invariant target; a control names the
// relations that must find it; a scan control says where it runs.
func TestInvariance(t *testing.T) {
	for _, tc := range []struct {
		info Info
		want string
	}{
		{Info{Invariant: true}, "yes"},
		{Info{Expect: []string{"batch_invariance", "padding"}}, "no (control: batch_invariance, padding)"},
		{Info{OnRequest: true, Expect: []string{"batch_invariance"}}, "no (scan control: batch_invariance; a campaign runs it where --targets names it)"},
		{Info{OnRequest: true}, "no (scan control: scan only, no campaign relation varies its dimension)"},
	} {
		if got := tc.info.Invariance(); got != tc.want {
			t.Errorf("%+v: Invariance() = %q, want %q", tc.info, got, tc.want)
		}
	}
}

// TestWriteTable: a header, then one line per registered target, in
// Names order, each with its op.
func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	names := Names()
	if len(lines) != len(names)+1 || strings.Fields(lines[0])[0] != "NAME" {
		t.Fatalf("%d lines for %d targets:\n%s", len(lines), len(names), b.String())
	}
	for i, n := range names {
		f := strings.Fields(lines[i+1])
		tg, err := Lookup(n)
		if err != nil || f[0] != n || f[1] != string(tg.Info().Op) {
			t.Errorf("line %d = %q, want target %s (%v)", i+1, lines[i+1], n, err)
		}
	}
}
