package words

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/spec"
)

// Drift says a drift map in one line, the one wording of every command,
// report and certificate: each dimension swept with its range and the rule
// stated for that range only,
//
//	over DIM FROM..TO[ at AT] (every value|N values[, R runs each][, D draws]): RULE[; NOTE]; not swept above TO
//
// then "; also over ..." for each other dimension swept (DriftMap.Also).
// RULE is the recognised rule, or "irregular, K classes: A = 1..3, 7; B =
// ..." when none was recognised. A map in which no dimension splits says
// so first: "no swept dimension splits: over rows 1..320 (...): every rows
// -> A; ...". NOTE is the map's Note (the positions that differ: "B:
// positions >= 264 differ"). A path-parity map adds the first value at
// which the two paths differ ("first differs at kv = 49"). A nil map is
// "none".
func Drift(d *spec.DriftMap) string {
	if d == nil {
		return "none"
	}
	parts := []string{driftDim(d)}
	for i := range d.Also {
		parts = append(parts, "also "+driftDim(&d.Also[i]))
	}
	s := strings.Join(parts, "; ")
	if len(d.Classes) == 1 { // the first map is the first that splits: none does
		s = "no swept dimension splits: " + s
	}
	return s
}

// driftDim says one dimension of a map: its range, how it was swept, its
// rule, and where it was not swept.
func driftDim(d *spec.DriftMap) string {
	from, to := d.From, d.To
	if from == 0 && to == 0 && len(d.Values) > 0 { // a map recorded before ranges were
		from, to = d.Values[0], d.Values[len(d.Values)-1]
	}
	var b strings.Builder
	if from == 0 && to == 0 { // no range and no values recorded: the rule alone
		fmt.Fprintf(&b, "over %s: %s", d.Dim, d.Rule)
		return b.String()
	}
	fmt.Fprintf(&b, "over %s %d..%d", d.Dim, from, to)
	if d.At != "" {
		b.WriteString(" at " + d.At)
	}
	var how []string
	if len(d.Values) == to-from+1 {
		how = append(how, "every value")
	} else {
		how = append(how, fmt.Sprintf("%d values", len(d.Values)))
	}
	if d.Runs > 1 {
		how = append(how, fmt.Sprintf("%d runs each", d.Runs))
	}
	if d.Draws > 1 {
		how = append(how, fmt.Sprintf("%d draws", d.Draws))
	}
	fmt.Fprintf(&b, " (%s): ", strings.Join(how, ", "))
	if d.Rule != "" {
		b.WriteString(d.Rule)
	} else {
		b.WriteString(classList(d))
	}
	if d.Note != "" {
		b.WriteString("; " + d.Note)
	}
	if v, ok := firstDiffers(d); ok {
		fmt.Fprintf(&b, "; first differs at %s = %d", d.Dim, v)
	}
	fmt.Fprintf(&b, "; not swept above %d", to)
	return b.String()
}

// classList says a map's classes with their values as spans, at most 8
// spans a class: "irregular, 3 classes: A = 1..3, 7; B = 4..6; C = 8,...".
func classList(d *spec.DriftMap) string {
	parts := make([]string, len(d.Classes))
	for i, c := range d.Classes {
		parts[i] = c.Label + " = " + Spans(c.Values, 8)
	}
	kind := d.Kind
	if kind == "" {
		kind = "irregular"
	}
	return fmt.Sprintf("%s, %d %s: %s", kind, len(d.Classes), Plural(int64(len(d.Classes)), "class", "classes"),
		strings.Join(parts, "; "))
}

// firstDiffers returns the smallest value of a path-parity map (one with a
// class labelled "agree") that is in another class.
func firstDiffers(d *spec.DriftMap) (int, bool) {
	agree := false
	first, found := 0, false
	for _, c := range d.Classes {
		if c.Label == "agree" {
			agree = true
			continue
		}
		if len(c.Values) > 0 && (!found || c.Values[0] < first) {
			first, found = c.Values[0], true
		}
	}
	return first, agree && found
}

// Spans says ascending values as runs of consecutive values, at most max
// runs, then ",...": "1..3, 7, 9..12".
func Spans(vs []int, max int) string {
	var parts []string
	for i := 0; i < len(vs); {
		j := i
		for j+1 < len(vs) && vs[j+1] == vs[j]+1 {
			j++
		}
		if len(parts) == max {
			parts = append(parts, "...")
			break
		}
		if j == i {
			parts = append(parts, strconv.Itoa(vs[i]))
		} else {
			parts = append(parts, strconv.Itoa(vs[i])+".."+strconv.Itoa(vs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
