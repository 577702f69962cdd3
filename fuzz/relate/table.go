package relate

import (
	"fmt"
	"io"
	"strings"
)

// WriteRelations writes the relations (Relations), one a line: name, how
// many targets it takes, the ops it applies to.
func WriteRelations(w io.Writer) {
	for _, r := range relations {
		ops := make([]string, len(r.Ops()))
		for i, op := range r.Ops() {
			ops[i] = string(op)
		}
		fmt.Fprintf(w, "  %-17s %d target(s), ops: %s\n", r.Name(), r.Targets(), strings.Join(ops, ", "))
	}
}

// WritePairs writes the campaign pairs (Pairs), one a line: relation and
// targets, a pair holding a negative control marked as one.
func WritePairs(w io.Writer) {
	for _, p := range Pairs() {
		note := ""
		if p.Expect {
			note = "  [must find: negative control]"
		}
		fmt.Fprintf(w, "  %-17s %s%s\n", p.Relation, strings.Join(p.Targets, " vs "), note)
	}
}
