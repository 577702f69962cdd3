package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/spec"
)

// Words says a finding in one paragraph:
//
//	OP RELATION on TARGET[ vs TARGET_B]: WHAT; case SHAPE IN->OUT dist=D seed=S[; drift over DIM: RULE (KIND)]
//
// where WHAT is, for a mismatch, "row R col C: 0xA (a) vs 0xB (b), N ulps in
// DTYPE, K rows differ"; for a crash, "crashed: ERROR"; for a misuse,
// "misuse: MESSAGE".
func Words(f spec.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s on %s", orDash(string(f.Case.Op)), orDash(f.Relation), orDash(f.TargetA))
	if f.TargetB != "" {
		fmt.Fprintf(&b, " vs %s", f.TargetB)
	}
	b.WriteString(": ")
	switch f.Kind {
	case "crash":
		b.WriteString("crashed")
		if f.Error != "" {
			b.WriteString(": " + f.Error)
		}
	case "misuse":
		b.WriteString("misuse")
		if f.Message != "" {
			b.WriteString(": " + f.Message)
		}
	default:
		fmt.Fprintf(&b, "row %d col %d: %s vs %s, ", f.Row, f.Col, value(f.A), value(f.B))
		if f.SignedZero {
			b.WriteString("+0 vs -0 (0 ulps, different bits)")
		} else {
			fmt.Fprintf(&b, "%d %s in %s", f.ULPs, plural(int64(f.ULPs), "ulp", "ulps"), f.ValueDType())
			if f.OnTaps {
				b.WriteString(" (fp32 intermediates; the outputs are equal)")
			}
		}
		if f.RowsDiffering > 0 {
			fmt.Fprintf(&b, ", %d %s", f.RowsDiffering, plural(int64(f.RowsDiffering), "row differs", "rows differ"))
		}
		if f.Message != "" {
			b.WriteString("; " + f.Message)
		}
	}
	fmt.Fprintf(&b, "; case %s", CaseWords(f.Case))
	if d := f.DriftMap; d != nil && d.Rule != "" {
		fmt.Fprintf(&b, "; drift over %s: %s (%s)", d.Dim, d.Rule, d.Kind)
	}
	return b.String()
}

// CaseWords says a case's shape, dtypes and inputs, e.g.
// "rows=2274 hidden=4096 bf16->bf16 dist=normal seed=7".
func CaseWords(c spec.Case) string {
	var parts []string
	s := c.Shape
	for _, kv := range []struct {
		k string
		v int
	}{{"rows", s.Rows}, {"hidden", s.Hidden}, {"n", s.N}, {"vocab", s.Vocab}, {"seqs", s.Seqs},
		{"seq_len", s.SeqLen}, {"kv", s.KV}, {"heads", s.Heads}, {"kv_heads", s.KVHeads}, {"head_dim", s.HeadDim}} {
		if kv.v != 0 {
			parts = append(parts, kv.k+"="+strconv.Itoa(kv.v))
		}
	}
	if len(s.KVLens) > 0 {
		parts = append(parts, "kv_lens="+ints(s.KVLens, 8))
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

// value says an element as "0xBITS (decimal)".
func value(v spec.Value) string {
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

// ints formats up to max values, then "...".
func ints(vs []int, max int) string {
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

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
