// Package words says findings and cases in words, the one way every
// command, report and test failure does: a finding in one paragraph
// (Finding), in a block of lines (Detail), a case's shape (Case) and a drift
// map's rule (Drift). It depends only on spec, so a team's fuzz tests can
// use it without the report formats' dependencies.
package words

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// Finding says a finding in one paragraph:
//
//	OP RELATION on TARGET[ vs TARGET_B]: WHAT; case SHAPE IN->OUT dist=D seed=S[; drift map: MAP]
//
// where WHAT is, for a mismatch, "row R col C: 0xA (a) vs 0xB (b), N ulps in
// DTYPE, K rows differ"; for a crash, "crashed: ERROR"; for a misuse,
// "misuse: MESSAGE".
func Finding(f spec.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s on %s", Dash(string(f.Case.Op)), Dash(f.Relation), Dash(f.TargetA))
	if f.TargetB != "" {
		fmt.Fprintf(&b, " vs %s", f.TargetB)
	}
	b.WriteString(": " + Problem(f))
	if f.Kind != spec.KindCrash && f.Kind != spec.KindMisuse {
		if f.RowsDiffering > 0 {
			fmt.Fprintf(&b, ", %d %s", f.RowsDiffering, Plural(int64(f.RowsDiffering), "row differs", "rows differ"))
		}
		if f.Message != "" {
			b.WriteString("; " + f.Message)
		}
	}
	fmt.Fprintf(&b, "; case %s", Case(f.Case))
	if f.DriftMap != nil {
		b.WriteString("; drift map: " + Drift(f.DriftMap))
	}
	if f.Explanation != "" {
		fmt.Fprintf(&b, "; explained: %s", f.Explanation)
	}
	return b.String()
}

// Problem is the short form of what a finding found: for a mismatch "row R
// col C: 0xA (a) vs 0xB (b), N ulps in DTYPE" (or "+0 vs -0 (0 ulps,
// different bits)"; for an op package's finding "row R, ELEMENT: a vs
// b"), for a crash "crashed: ERROR", for a misuse "misuse:
// MESSAGE".
func Problem(f spec.Finding) string {
	switch f.Kind {
	case spec.KindCrash:
		if f.Error != "" {
			return "crashed: " + f.Error
		}
		return "crashed"
	case spec.KindMisuse:
		if f.Message != "" {
			return "misuse: " + f.Message
		}
		return "misuse"
	}
	if f.Element != "" {
		return fmt.Sprintf("row %d, %s: %s vs %s", f.Row, f.Element, Value(f.A), Value(f.B))
	}
	s := fmt.Sprintf("row %d col %d: %s vs %s, ", f.Row, f.Col, Value(f.A), Value(f.B))
	if f.Kind == spec.KindReference {
		s = "REFERENCE DISAGREES WITH THE CPU ORACLE (no verdict on the target): " + s
	}
	if f.SignedZero {
		return s + "+0 vs -0 (0 ulps, different bits)"
	}
	s += fmt.Sprintf("%d %s in %s", f.ULPs, Plural(int64(f.ULPs), "ulp", "ulps"), f.ValueDType())
	if f.OnTaps {
		s += " (fp32 intermediates; the outputs are equal)"
	}
	return s
}

// Case says a case's shape, relation parameters, dtypes and inputs, e.g.
// "rows=2274 hidden=4096 bf16->bf16 dist=normal seed=7" or
// "rows=1 hidden=64 batch=928 bf16->bf16 dist=boundary seed=3".
func Case(c spec.Case) string {
	var parts []string
	s := c.Shape
	for _, d := range spec.Dims {
		if v := d.Get(s); v != 0 {
			parts = append(parts, d.Name+"="+strconv.Itoa(v))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Dims)) {
		parts = append(parts, k+"="+strconv.Itoa(s.Dims[k]))
	}
	for _, kv := range []struct {
		k string
		v int
	}{{"batch", c.Rel.Batch}, {"pad", c.Rel.Pad}} {
		if kv.v != 0 {
			parts = append(parts, kv.k+"="+strconv.Itoa(kv.v))
		}
	}
	if len(s.KVLens) > 0 {
		parts = append(parts, "kv_lens="+Ints(s.KVLens, 8))
	}
	if c.In != "" || c.Out != "" {
		dt := string(c.In) + "->" + string(c.Out)
		if c.Compare != "" && c.Compare != c.Out {
			dt += " compared in " + string(c.Compare)
		}
		parts = append(parts, dt)
	}
	if c.Data != nil {
		parts = append(parts, "explicit data")
	} else {
		parts = append(parts, "dist="+string(c.Dist), "seed="+strconv.FormatUint(c.Seed, 10))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// Value says an element as "0xBITS (decimal)".
func Value(v spec.Value) string {
	if v.Hex != "" && !strings.HasPrefix(v.Hex, "0x") {
		v.Hex = "0x" + v.Hex
	}
	switch {
	case v.Hex == "" && v.Dec == "":
		return "?"
	case v.Dec == "":
		return v.Hex
	case v.Hex == "":
		return v.Dec
	}
	return v.Hex + " (" + v.Dec + ")"
}

// Ints formats up to max values, then "...".
func Ints(vs []int, max int) string {
	var b strings.Builder
	for i, v := range vs {
		if i == max {
			b.WriteString(",...")
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}

// Compared is what one comparison of a scan of op is of: a composite op's
// (a model route's) is one request's outputs, "request"; any other op's
// one output row, "row".
func Compared(op spec.Op) string {
	if o, _ := op.Info(); o.Composite {
		return "request"
	}
	return "row"
}

// Plural is one when n is 1, else many.
func Plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Dash is s, or "-" when s is empty.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Detail says a finding in a block of lines, each indented by two spaces:
// the minimal case as JSON, what it was shrunk from, the first diverging
// row and column with both values and the ulps (an op package's finding:
// the element, spec.Finding.Element, and both values; a crash: its error), the
// message, the drift map, when it was found and the repro line.
func Detail(w io.Writer, f spec.Finding) {
	cj, _ := json.Marshal(f.Case)
	fmt.Fprintf(w, "  minimal case: %s\n", cj)
	if f.Original != nil {
		fmt.Fprintf(w, "  shrunk in %d steps from %s\n", f.ShrinkSteps, Case(*f.Original))
	}
	switch {
	case f.Kind == spec.KindCrash:
		fmt.Fprintf(w, "  error: %s\n", f.Error)
	case f.Element != "":
		fmt.Fprintf(w, "  first diverging row %d, %s: A = %s, B = %s; %d %s\n", f.Row, f.Element, Value(f.A), Value(f.B),
			f.RowsDiffering, Plural(int64(f.RowsDiffering), "row differs", "rows differ"))
	default:
		fmt.Fprintf(w, "  first diverging row %d, column %d: A = %s, B = %s, %d %s in %s", f.Row, f.Col,
			Value(f.A), Value(f.B), f.ULPs, Plural(int64(f.ULPs), "ulp", "ulps"), f.ValueDType())
		if f.SignedZero {
			fmt.Fprint(w, " (+0 vs -0)")
		}
		fmt.Fprintf(w, "; %d %s\n", f.RowsDiffering, Plural(int64(f.RowsDiffering), "row differs", "rows differ"))
	}
	if f.Message != "" {
		fmt.Fprintf(w, "  %s\n", f.Message)
	}
	if f.DriftMap != nil {
		fmt.Fprintf(w, "  drift map: %s\n", Drift(f.DriftMap))
	}
	if f.Explanation != "" {
		fmt.Fprintf(w, "  explained: %s\n", f.Explanation)
	}
	if f.CasesBefore > 0 {
		fmt.Fprintf(w, "  found after %s and %d cases; minimal after %s more\n", time.Duration(f.Elapsed).Round(time.Millisecond),
			f.CasesBefore, time.Duration(f.ToMinimal).Round(time.Millisecond))
	}
	fmt.Fprintf(w, "  repro: %s\n", f.Repro)
}

// Targets names the finding's targets: "A", or "A vs B" for a pair.
func Targets(f spec.Finding) string {
	if f.TargetB != "" {
		return f.TargetA + " vs " + f.TargetB
	}
	return f.TargetA
}

// Numbered prints finding number n as bitparity run does: a head line
// (kind, relation, targets and the verdict's note in brackets when there
// is one), its Detail and an empty line.
func Numbered(w io.Writer, n int, f spec.Finding, note string) {
	head := fmt.Sprintf("finding %d: %s, %s on %s", n, f.Kind, f.Relation, Targets(f))
	if note != "" {
		head += " [" + note + "]"
	}
	fmt.Fprintln(w, head)
	Detail(w, f)
	fmt.Fprintln(w)
}
