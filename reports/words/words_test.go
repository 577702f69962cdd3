package words

import (
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

func TestProblem(t *testing.T) {
	bf16 := spec.Case{Op: spec.OpRMSNorm, In: spec.BF16, Out: spec.BF16}
	for _, tc := range []struct {
		name string
		f    spec.Finding
		want string
	}{
		{"mismatch", spec.Finding{Kind: "mismatch", Row: 17, Col: 3, ULPs: 1, Case: bf16,
			A: spec.Value{Hex: "3f81", Dec: "1.0078125"}, B: spec.Value{Hex: "0x3f80", Dec: "1"}},
			"row 17 col 3: 0x3f81 (1.0078125) vs 0x3f80 (1), 1 ulp in bf16"},
		{"signed zero", spec.Finding{Kind: "mismatch", Row: 1, SignedZero: true, Case: bf16,
			A: spec.Value{Hex: "8000", Dec: "-0"}, B: spec.Value{Hex: "0000", Dec: "0"}},
			"row 1 col 0: 0x8000 (-0) vs 0x0000 (0), +0 vs -0 (0 ulps, different bits)"},
		{"op element", spec.Finding{Kind: "mismatch", Row: 30, Col: 0, Element: "expert_ids[0] (int32)",
			Case: spec.Case{Op: "moe_route", In: spec.BF16, Out: spec.BF16},
			A:    spec.Value{Hex: "0x00000001", Dec: "1"}, B: spec.Value{Hex: "0x0000000c", Dec: "12"}},
			"row 30, expert_ids[0] (int32): 0x00000001 (1) vs 0x0000000c (12)"},
		{"crash", spec.Finding{Kind: "crash", Error: "illegal address"}, "crashed: illegal address"},
		{"misuse", spec.Finding{Kind: "misuse", Message: "compared in fp32"}, "misuse: compared in fp32"},
	} {
		if got := Problem(tc.f); got != tc.want {
			t.Errorf("%s: Problem = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCaseAndFinding(t *testing.T) {
	c := spec.Case{Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance, Targets: []string{"drift-x"},
		Shape: spec.Shape{Rows: 1, Hidden: 64}, Rel: spec.RelParams{Batch: 928}, In: spec.BF16, Out: spec.BF16,
		Dist: spec.DistBoundary, Seed: 3}
	if got, want := Case(c), "rows=1 hidden=64 batch=928 bf16->bf16 dist=boundary seed=3"; got != want {
		t.Errorf("Case = %q, want %q", got, want)
	}
	f := spec.Finding{Kind: "mismatch", Case: c, Relation: c.Relation, TargetA: "drift-x", RowsDiffering: 2,
		A: spec.Value{Hex: "3f81"}, B: spec.Value{Hex: "3f80"}, ULPs: 1,
		DriftMap: &spec.DriftMap{Dim: "rows", Rule: "rows % 32 == 0 -> A, otherwise -> B", Kind: "periodic"}}
	got := Finding(f)
	for _, want := range []string{"rmsnorm batch_invariance on drift-x: row 0 col 0", "2 rows differ",
		"case rows=1 hidden=64 batch=928", "drift map: over rows: rows % 32 == 0 -> A, otherwise -> B"} {
		if !strings.Contains(got, want) {
			t.Errorf("Finding = %q, lacks %q", got, want)
		}
	}
	var b strings.Builder
	Detail(&b, f)
	if !strings.Contains(b.String(), "  first diverging row 0, column 0: A = 0x3f81, B = 0x3f80, 1 ulp in bf16; 2 rows differ\n") {
		t.Errorf("Detail:\n%s", b.String())
	}
}

// TestCompared: a scan of a composite op (a model route) compares
// requests, any other scan rows.
func TestCompared(t *testing.T) {
	for op, want := range map[spec.Op]string{spec.OpModel: "request", spec.OpTransformer: "request", spec.OpRMSNorm: "row", spec.OpAttnDecode: "row"} {
		if got := Compared(op); got != want {
			t.Errorf("Compared(%s) = %q, want %q", op, got, want)
		}
	}
}
