package target

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Invariance says in words whether a target claims invariance: "yes"; or
// no, with why (a scan control, which no campaign relation or only the
// ones it names vary; a control and the relations that must find it).
func (i Info) Invariance() string {
	switch {
	case i.OnRequest && len(i.Expect) == 0:
		return "no (scan control: scan only, no campaign relation varies its dimension)"
	case i.OnRequest:
		return "no (scan control: " + strings.Join(i.Expect, ", ") + "; a campaign runs it where --targets names it)"
	case !i.Invariant:
		return "no (control: " + strings.Join(i.Expect, ", ") + ")"
	}
	return "yes"
}

// WriteTable writes the registered targets (Names) as a table, as
// `bitparity list` shows them: name, op, device, Invariance, the declared
// schedule (or the ulp bound of an undeclared one) and what it models. A
// target that cannot be made here is listed as unavailable, with why.
func WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tOP\tDEVICE\tINVARIANT\tSCHEDULE\tMODELS")
	for _, name := range Names() {
		t, err := Lookup(name)
		if err != nil {
			fmt.Fprintf(tw, "  %s\t-\tunavailable\t-\t-\t%v\n", name, err)
			continue
		}
		info := t.Info()
		sched := info.Schedule
		if sched == "" {
			sched = fmt.Sprintf("undeclared (oracle parity within %d ulps)", info.ULPBound)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", name, info.Op, info.Device, info.Invariance(), sched, info.Models)
	}
	return tw.Flush()
}
