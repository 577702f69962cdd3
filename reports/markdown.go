package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/bitparity/bitparity/reports/words"
)

// statusEmoji marks statuses in Markdown, where colour is not available.
var statusMark = map[string]string{
	StatusNew:          "🔴 new",
	StatusStillFailing: "🟠 still failing",
	StatusFixed:        "🟢 fixed",
	StatusNotRerun:     "⚪ not rerun",
	StatusNotSeen:      "⚪ not seen",
	CellPass:           "✅ pass",
	CellFail:           "❌ fail",
	CellCrash:          "💥 crash",
	CellNotRun:         "⚪ not run",
	CellExpected:       "☑️ expected",
	CellInterrupted:    "⏹️ interrupted",
}

// writeMarkdown writes a GitHub-flavoured Markdown summary for a CI step
// summary ($GITHUB_STEP_SUMMARY): the counts, a findings table, each
// finding in words with its repro command, the failing cells and the trend.
// All text from result files is escaped (no raw HTML, no table breaks).
func writeMarkdown(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	s := r.Summary
	fmt.Fprintf(ew, "## bitparity: %d unexpected (%d new), %d fixed, %d expected on negative controls\n\n",
		s.Unexpected, s.NewUnexpected, s.Fixed, s.Expected)
	if n := len(r.Inputs); n > 0 {
		in := r.Inputs[n-1]
		fmt.Fprintf(ew, "Tonight: %s, %s, %d cases, seed %d, %d targets, %d of %d op × relation × target cells failing.",
			stamp(in.Started), span(in.Duration), in.Cases, in.Seed, s.Targets, s.CellsFailing, s.Cells)
		if s.NotRerun > 0 {
			fmt.Fprintf(ew, " %d finding(s) of the night before were not rerun.", s.NotRerun)
		}
		fmt.Fprintf(ew, "\n\n")
	}
	if s.Interrupted {
		fmt.Fprintf(ew, "**INTERRUPTED**: tonight's campaign was stopped by a signal before its end; its counts and findings cover the cases it ran, and it is not a pass.\n\n")
	}
	if len(r.Findings) == 0 {
		fmt.Fprintf(ew, "No findings.\n")
	} else {
		fmt.Fprintf(ew, "| status | expected | op | relation | target | first seen | what | drift |\n")
		fmt.Fprintf(ew, "|---|---|---|---|---|---|---|---|\n")
		for _, e := range r.Findings {
			f := e.Finding
			tgt := f.TargetA
			if f.TargetB != "" {
				tgt += " vs " + f.TargetB
			}
			drift := ""
			if f.DriftMap != nil && f.DriftMap.Rule != "" {
				drift = mdCode(f.DriftMap.Rule)
			}
			exp := "no"
			if e.Expected {
				exp = "negative control"
			}
			fmt.Fprintf(ew, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", statusMark[e.Status], exp,
				mdCode(string(f.Case.Op)), mdCode(f.Relation), mdCode(tgt),
				e.FirstSeen.UTC().Format("2006-01-02"), mdText(problemLine(e)), drift)
		}
		fmt.Fprintf(ew, "\n<details><summary>Findings in words and repro commands</summary>\n\n")
		for _, e := range r.Findings {
			fmt.Fprintf(ew, "- **%s** %s, %s  \n  %s  \n  repro: %s\n", statusMark[e.Status], mdCode(e.Signature),
				expectWords(e), mdText(e.Words), mdCode(repro(e.Finding.Repro)))
		}
		fmt.Fprintf(ew, "\n</details>\n")
	}

	var failing []Cell
	for _, c := range r.Cells {
		if c.Status != CellPass {
			failing = append(failing, c)
		}
	}
	if len(failing) > 0 {
		fmt.Fprintf(ew, "\n### Cells that are not a plain pass\n\n| status | op | relation | target | cases |\n|---|---|---|---|---|\n")
		for _, c := range failing {
			fmt.Fprintf(ew, "| %s | %s | %s | %s | %d |\n", statusMark[c.Status], mdCode(words.Dash(string(c.Op))),
				mdCode(c.Relation), mdCode(targetLabel(c.Target, c.Invariant)), c.Cases)
		}
	}
	if len(r.Trend) > 1 {
		fmt.Fprintf(ew, "\n### Trend\n\n| night | cases | findings | new | still failing | fixed |\n|---|---|---|---|---|---|\n")
		for _, n := range r.Trend {
			fmt.Fprintf(ew, "| %s | %d | %d | %d | %d | %d |\n", stamp(n.Started), n.Cases, n.Findings, n.New, n.StillFailing, n.Fixed)
		}
	}
	return ew.err
}

// mdText escapes Markdown and HTML syntax in running text and keeps it on
// one line (a table cell or a list item).
func mdText(s string) string {
	var b strings.Builder
	for _, r := range oneLine(s) {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '|', '#', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode makes an inline code span that survives backticks inside s and
// table pipes.
func mdCode(s string) string {
	s = strings.ReplaceAll(oneLine(s), "|", `\|`)
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
