package explain

import (
	"fmt"
	"regexp"
	"strings"
)

// arrow matches a class label at the end of a rule's clause: "... -> B".
var arrow = regexp.MustCompile(`\s*->\s*([A-Z]+)$`)

// words writes the drift map's rule with each clause's class replaced by
// what was found for it:
//
//	rows % 32 == 0: threads=64 vec=8 ...; otherwise: threads=32 vec=4 ...
//
// A class probed on two targets (path parity) lists both, "T1: ...; T2:
// ...". Without a rule, each class is listed with its values.
func words(ex *Explanation) string {
	byLabel := map[string]string{}
	for _, c := range ex.Classes {
		byLabel[c.Label] = describeClass(c)
	}
	if ex.Rule != "" {
		clauses := strings.Split(ex.Rule, ", ")
		ok := true
		for i, cl := range clauses {
			m := arrow.FindStringSubmatch(cl)
			if m == nil || byLabel[m[1]] == "" {
				ok = false
				break
			}
			clauses[i] = arrow.ReplaceAllString(cl, "") + ": " + byLabel[m[1]]
		}
		if ok {
			return strings.Join(clauses, "; ")
		}
	}
	parts := make([]string, len(ex.Classes))
	for i, c := range ex.Classes {
		parts[i] = fmt.Sprintf("%s (%s = %d): %s", c.Label, ex.Dim, c.Value, byLabel[c.Label])
	}
	return strings.Join(parts, "; ")
}

func describeClass(c Class) string {
	if len(c.Targets) == 1 {
		return c.Targets[0].Describe()
	}
	parts := make([]string, len(c.Targets))
	for i, t := range c.Targets {
		parts[i] = t.Name + " " + t.Describe()
	}
	return "[" + strings.Join(parts, " / ") + "]"
}

// Text writes the explanation for a person: the rule in words, then per
// class and target how the search narrowed.
func (ex *Explanation) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "explained: %s\n", ex.Words)
	for _, c := range ex.Classes {
		for _, t := range c.Targets {
			taps := "outputs"
			if t.Taps {
				taps = "outputs and fp32 taps"
			}
			pruned := ""
			if t.Pruned {
				pruned = fmt.Sprintf(" (over %d: pruned by one probe row first)", pruneAbove)
			}
			first := fmt.Sprintf("the first %d probe rows", t.FirstRows)
			if t.FirstRows == 1 {
				first = "probe row 1"
			}
			fmt.Fprintf(&b, "  class %s (%s = %d), %s: %d schedules, %d different orders%s; on %s: %d different bit patterns, %d matched the target; %d group(s) matched all %d probe rows (%s)%s\n",
				c.Label, ex.Dim, c.Value, t.Name, t.Space, t.Ran, pruned, first, t.Distinct, t.Survivors, len(t.Matches), t.ProbeRows, taps, refined(t.Refined))
			for _, m := range t.Matches {
				list := m.Schedules
				more := ""
				if len(list) > 6 {
					list, more = list[:6], fmt.Sprintf("; ... %d more", len(m.Schedules)-6)
				}
				fmt.Fprintf(&b, "    %s%s\n", strings.Join(list, "; "), more)
			}
		}
	}
	return b.String()
}

func refined(r string) string {
	switch r {
	case "yes":
		return "; narrowed by probes with fp32 outputs"
	case "unsupported":
		return "; the target has no fp32 output to narrow further"
	case "no match":
		return "; no match with fp32 outputs: unrefined"
	}
	return ""
}
