package reports

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
)

// statusWords says a finding status for people.
var statusWords = map[string]string{
	StatusNew:          "NEW",
	StatusStillFailing: "STILL FAILING",
	StatusFixed:        "FIXED",
	StatusNotRerun:     "NOT RERUN",
	StatusNotSeen:      "NOT SEEN",
}

// writeText writes the human summary: tonight's counts, the findings (status,
// since when, the finding in words, the repro command), the op x relation x
// target cells, and the trend when there are several nights.
func writeText(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	s := r.Summary
	fmt.Fprintf(ew, "bitparity report (schema %d), generated %s\n", r.Version, stamp(r.Generated))
	if n := len(r.Inputs); n > 0 {
		in := r.Inputs[n-1]
		fmt.Fprintf(ew, "tonight: %s, %s, %d cases, seed %d, %d targets (%s)\n",
			stamp(in.Started), span(in.Duration), in.Cases, in.Seed, s.Targets, in.Path)
	}
	if s.Interrupted {
		fmt.Fprintf(ew, "INTERRUPTED: tonight's campaign was stopped by a signal before its end; its counts and findings cover the cases it ran, and it is not a pass\n")
	}
	fmt.Fprintf(ew, "findings: %d tonight (%d new, %d still failing); %d fixed (a recheck passed), %d not seen, %d not rerun since the night before\n",
		s.Findings, s.New, s.StillFailing, s.Fixed, s.NotSeen, s.NotRerun)
	fmt.Fprintf(ew, "unexpected: %d (%d new); expected on negative controls: %d\n", s.Unexpected, s.NewUnexpected, s.Expected)
	fmt.Fprintf(ew, "cells: %d op x relation x target, %d failing or crashing\n", s.Cells, s.CellsFailing)

	if len(r.Findings) > 0 {
		fmt.Fprintf(ew, "\nFINDINGS\n")
		for _, e := range r.Findings {
			fmt.Fprintf(ew, "%-13s  %s  %s, first seen %s, %d %s\n", statusWords[e.Status], e.Signature, expectWords(e),
				stamp(e.FirstSeen), e.Nights, words.Plural(int64(e.Nights), "night", "nights"))
			fmt.Fprintf(ew, "    %s\n", e.Words)
			fmt.Fprintf(ew, "    repro: %s\n", repro(e.Finding.Repro))
		}
	}

	if len(r.Cells) > 0 {
		fmt.Fprintf(ew, "\nCELLS\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "STATUS\tOP\tRELATION\tTARGET\tCASES\tFINDINGS")
		for _, c := range r.Cells {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", c.Status, words.Dash(string(c.Op)), c.Relation,
				targetLabel(c.Target, c.Invariant), c.Cases, words.Dash(strings.Join(c.Findings, ",")))
		}
		tw.Flush()
	}

	if len(r.Trend) > 1 {
		fmt.Fprintf(ew, "\nTREND (%d nights)\n", len(r.Trend))
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NIGHT\tCASES\tFINDINGS\tNEW\tSTILL FAILING\tFIXED")
		for _, n := range r.Trend {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\n", stamp(n.Started), n.Cases, n.Findings, n.New, n.StillFailing, n.Fixed)
		}
		tw.Flush()
	}
	return ew.err
}

// expectWords says whether a finding was expected (a negative control).
func expectWords(e Entry) string {
	if e.Expected {
		return "expected (negative control)"
	}
	return "unexpected"
}

// span formats a campaign's duration: whole seconds from a minute up,
// milliseconds below.
func span(d spec.Duration) string {
	t := time.Duration(d)
	if t >= time.Minute {
		return t.Round(time.Second).String()
	}
	return t.Round(time.Millisecond).String()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func repro(s string) string {
	if s == "" {
		return "(no repro command recorded)"
	}
	return s
}

func targetLabel(name string, invariant bool) string {
	if invariant {
		return name + " (invariant)"
	}
	return name
}

// errWriter keeps the first write error so formatting code stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
