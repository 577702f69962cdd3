package detect

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Models reads a list of drift models, comma-separated, each optionally
// model@relation (bitparity detect --models); an empty list is every
// registered CPU drift model that runs without asking (not OnRequest), on
// its default relation. A name that is not a registered drift model is an
// error.
func Models(list string) ([]Model, error) {
	var ms []Model
	if list == "" {
		for _, n := range target.Names() {
			t, err := target.Lookup(n)
			if err != nil {
				continue
			}
			if i := t.Info(); !i.Invariant && !i.OnRequest && len(i.Expect) > 0 && i.Device == "cpu" {
				ms = append(ms, Model{Name: n})
			}
		}
		return ms, nil
	}
	for _, m := range strings.Split(list, ",") {
		name, rel, _ := strings.Cut(m, "@")
		t, err := target.Lookup(name)
		if err != nil {
			return nil, err
		}
		if len(t.Info().Expect) == 0 {
			return nil, fmt.Errorf("%s is not a drift model (bitparity list shows them)", name)
		}
		ms = append(ms, Model{Name: name, Relation: rel})
	}
	return ms, nil
}

// WriteMarkdown writes lines as the Markdown table of docs/detection.md:
// per model and relation, the median cases and seconds with random and
// with boundary inputs. A median from runs of which at most half found
// the drift is a lower bound (">N"), and runs that found nothing are
// counted ("(f/r found)").
func WriteMarkdown(w io.Writer, lines []Line) {
	fmt.Fprintf(w, "| drift model | relation | random: cases | random: s | boundary: cases | boundary: s |\n")
	fmt.Fprintf(w, "|---|---|---:|---:|---:|---:|\n")
	for _, l := range lines {
		fmt.Fprintf(w, "| %s | %s | %s | %.3f | %s | %.3f |\n", l.Model, l.Relation,
			l.Normal.cases(), l.Normal.Seconds, l.Boundary.cases(), l.Boundary.Seconds)
	}
}

// cases is the median's cases as a table cell.
func (m Median) cases() string {
	c := fmt.Sprint(m.Cases)
	if m.Found*2 <= m.Runs { // the median run found nothing
		c = ">" + c
	}
	if m.Found < m.Runs {
		c += fmt.Sprintf(" (%d/%d found)", m.Found, m.Runs)
	}
	return c
}

// WriteRowsDiffering runs case c with Dist normal, then Dist boundary
// (RowsDiffering: outputs only) and writes how many rows differ with each.
func WriteRowsDiffering(ctx context.Context, w io.Writer, c spec.Case) error {
	for _, d := range []spec.Dist{spec.DistNormal, spec.DistBoundary} {
		c.Dist = d
		n, msg, err := RowsDiffering(ctx, c)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: %d rows differ (outputs only) %s\n", d, n, msg)
	}
	return nil
}
