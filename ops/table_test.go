package ops_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
)

// TestWriteTable: one line per op with its dimensions, then one per
// target with its op and whether it is a control.
func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := ops.WriteTable(&b, all.Ops); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, op := range all.Ops {
		r := op.Record()
		if !strings.Contains(out, "  "+r.Name+" ") || !strings.Contains(out, "a row is one "+r.Item) {
			t.Errorf("no line for op %s:\n%s", r.Name, out)
		}
		for _, tg := range op.Targets() {
			want := []string{tg.Name(), r.Name, "cpu", "yes"}
			if !tg.Invariant() {
				want[3] = "no"
			}
			found := false
			for _, l := range strings.Split(out, "\n") {
				f := strings.Fields(l)
				found = found || len(f) > 4 && strings.Join(f[:4], " ") == strings.Join(want, " ")
			}
			if !found {
				t.Errorf("no line %q for target %s:\n%s", strings.Join(want, " "), tg.Name(), out)
			}
		}
	}
}
