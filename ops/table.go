package ops

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the ops of list, one line each (its name, what a row
// is, its dimensions at their defaults and the distributions it draws),
// then their targets as a table: name, op, device, whether it is
// invariant or a control, the policy it declares and what it models.
func WriteTable(w io.Writer, list []Op) error {
	var ts []Target
	for _, op := range list {
		r := op.Record()
		dims := make([]string, len(r.Dims))
		for i, d := range r.Dims {
			dims[i] = fmt.Sprintf("%s=%d", d.Name, d.Default)
		}
		fmt.Fprintf(w, "  %-17s a row is one %s; %s; draws %s\n", r.Name, r.Item, strings.Join(dims, " "), strings.Join(r.Dists, ", "))
		ts = append(ts, op.Targets()...)
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tOP\tDEVICE\tINVARIANT\tDECLARED\tMODELS")
	for _, t := range ts {
		inv := "yes"
		if !t.Invariant() {
			inv = "no (control: a drift scan must find)"
		}
		fmt.Fprintf(tw, "  %s\t%s\tcpu\t%s\t%s\t%s\n", t.Name(), t.Op().Record().Name, inv, t.Declared(), t.Models())
	}
	return tw.Flush()
}
