package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// caseWithUnreported returns a generated invariant case whose engine
// leaves some positions unreported (so the case carries a mask).
func caseWithUnreported(t *testing.T) spec.Case {
	t.Helper()
	for seed := uint64(1); seed < 200; seed++ {
		if c := (Gen{}).Case(seed); len(c.Rel.Mask) > 0 {
			return c
		}
	}
	t.Fatal("no generated case with unreported positions in 200 seeds")
	return spec.Case{}
}

// TestMisuseControls: the seed's harness bugs are flagged as misuse and
// explained, while the same case compared correctly holds.
func TestMisuseControls(t *testing.T) {
	ctx := context.Background()
	base := caseWithUnreported(t)
	if f, err := Check(ctx, base); err != nil || f != nil {
		t.Fatalf("the correctly masked case in bf16: finding %+v, error %v", f, err)
	}
	fp32 := base
	fp32.Compare = spec.FP32
	zeroFill := base
	zeroFill.Rel.Mask = nil
	tests := []struct {
		name string
		c    spec.Case
		want []string
	}{
		{"compare fp32 against bf16 training dtype", fp32,
			[]string{"misuse: log-probs compared in fp32, but the declared training dtype is bf16", "equal in bf16", "set compare to bf16"}},
		{"zero-filled unreported positions counted", zeroFill,
			[]string{"never reported by the engine", "zero-fill", "spurious mismatches", "Mask them out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Check(ctx, tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if f == nil || f.Kind != "misuse" {
				t.Fatalf("want a misuse finding, got %+v", f)
			}
			for _, w := range tt.want {
				if !strings.Contains(f.Message, w) {
					t.Errorf("message lacks %q:\n%s", w, f.Message)
				}
			}
			if f.Signature == "" || f.Repro == "" {
				t.Errorf("finding without signature or repro: %+v", f)
			}
			t.Logf("%s", f.Message)
		})
	}
	// the zero-fill shows as spurious mismatches: the engine's +0 against
	// the trainer's log-prob.
	f, _ := Check(ctx, zeroFill)
	if f.RowsDiffering == 0 || f.B.Hex != "0000" {
		t.Errorf("zero-fill finding: %d spurious rows, engine value %s; want > 0 and 0000", f.RowsDiffering, f.B.Hex)
	}
}

// TestCaseErrors: malformed cases are errors, never panics or findings.
func TestCaseErrors(t *testing.T) {
	good := (Gen{}).Case(3)
	tests := []struct {
		name string
		edit func(c *spec.Case)
		want string
	}{
		{"op", func(c *spec.Case) { c.Op = spec.OpGEMM }, "op"},
		{"kv heads", func(c *spec.Case) { c.Shape.Heads, c.Shape.KVHeads = 3, 2 }, "multiple"},
		{"zero layers", func(c *spec.Case) { c.Shape.Rows = 0 }, "layers"},
		{"huge", func(c *spec.Case) { c.Shape.Hidden, c.Shape.Vocab = 1<<14, 1<<14 }, "budget"},
		{"dtype", func(c *spec.Case) { c.In = "fp8" }, "dtype"},
		{"seq len", func(c *spec.Case) { c.Shape.SeqLen = 1 }, "requests"},
		{"activations", func(c *spec.Case) { c.Shape.Seqs, c.Shape.SeqLen, c.Shape.Vocab = 256, 4096, 4096 }, "memory budget"},
		{"mask", func(c *spec.Case) { c.Rel.Mask = []int{1 << 20} }, "mask"},
		{"filler", func(c *spec.Case) { c.Rel.Filler = "junk" }, "filler"},
		{"targets", func(c *spec.Case) { c.Targets = []string{"oracle-gemm"} }, "targets"},
		{"model", func(c *spec.Case) { c.Targets = []string{"train:fixed+nope@L0.qkv", "infer:fixed"} }, "unknown drift model"},
		{"kind", func(c *spec.Case) { c.Targets = []string{"train:fixed+gemm_splitk_by_m@L0.attn_norm", "infer:fixed"} }, "gemm kernel"},
		{"layer", func(c *spec.Case) { c.Targets = []string{"train:fixed+gemm_splitk_by_m@L9.qkv", "infer:fixed"} }, "layers"},
		{"site", func(c *spec.Case) { c.Targets = []string{"train:fixed+gemm_splitk_by_m@final.qkv", "infer:fixed"} }, "decoder layer"},
		{"relation", func(c *spec.Case) { c.Relation = spec.RelPadding }, "relation"},
		{"tile", func(c *spec.Case) { c.Shape.KV = 5000 }, "tile"},
		{"data", func(c *spec.Case) { c.Data = &spec.Data{} }, "explicit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			c.Shape.KVLens = nil
			tt.edit(&c)
			f, err := Check(context.Background(), c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want an error containing %q, got finding %v error %v", tt.want, f, err)
			}
		})
	}
}

// TestSweepOnset: an irregular map names its onset; recognised maps keep
// driftmap's rule.
func TestSweepOnset(t *testing.T) {
	values := make([]int, 128)
	for i := range values {
		values[i] = i + 1
	}
	tests := []struct {
		name, kind, rule string
		class            func(v int) bool
	}{
		{"onset", "irregular", "rows <= 49 -> A, rows >= 50 -> any of 2 classes (data-dependent)", func(v int) bool { return v == 50 || v == 77 || v == 103 }},
		{"threshold", "threshold", "rows <= 99 -> A, rows >= 100 -> B", func(v int) bool { return v >= 100 }},
		{"periodic", "periodic", "rows % 32 == 0 -> B, otherwise -> A", func(v int) bool { return v%32 == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dm, err := sweep(context.Background(), "rows", values, func(v int) (string, error) {
				return map[bool]string{true: "b", false: "a"}[tt.class(v)], nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if dm.Kind != tt.kind || dm.Rule != tt.rule {
				t.Fatalf("got %s %q, want %s %q", dm.Kind, dm.Rule, tt.kind, tt.rule)
			}
		})
	}
}
