package relate

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteTables: a line per relation naming its ops, and a line per
// campaign pair, the negative controls marked.
func TestWriteTables(t *testing.T) {
	var b bytes.Buffer
	WriteRelations(&b)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(relations) {
		t.Fatalf("%d lines for %d relations:\n%s", len(lines), len(relations), b.String())
	}
	for i, r := range relations {
		if f := strings.Fields(lines[i]); f[0] != r.Name() || !strings.Contains(lines[i], string(r.Ops()[0])) {
			t.Errorf("line %q for relation %s", lines[i], r.Name())
		}
	}
	b.Reset()
	WritePairs(&b)
	lines = strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	pairs := Pairs()
	if len(lines) != len(pairs) {
		t.Fatalf("%d lines for %d pairs", len(lines), len(pairs))
	}
	for i, p := range pairs {
		if strings.Contains(lines[i], "[must find: negative control]") != p.Expect || !strings.Contains(lines[i], strings.Join(p.Targets, " vs ")) {
			t.Errorf("line %q for pair %v", lines[i], p)
		}
	}
}
