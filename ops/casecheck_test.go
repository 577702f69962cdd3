package ops_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/moerouter"
	"github.com/bitparity/bitparity/ops/quantfp8"
	"github.com/bitparity/bitparity/spec"
)

// TestCheckCase: a campaign's case of moe_router passes; each broken
// field, as a case file from elsewhere may hold it, is named with its
// rule, before any input exists (a batch or sizes too large for the
// budget included).
func TestCheckCase(t *testing.T) {
	good := func() spec.Case {
		return spec.Case{Version: spec.CaseVersion, Op: "moe_router", Relation: spec.RelBatchInvariance,
			Targets: []string{"drift-moe-router-splitk-by-m"},
			Shape:   spec.Shape{Rows: 65, Dims: map[string]int{"experts": 32, "hidden": 512, "top_k": 2}},
			In:      "bf16", Out: "bf16", Dist: "sensitive", Seed: 1, GenVersion: spec.GeneratorVersion}
	}
	if err := ops.CheckCase(moerouter.Op{}, good()); err != nil {
		t.Fatalf("a campaign's case: %v", err)
	}
	for _, tc := range []struct {
		field, want string
		edit        func(*spec.Case)
	}{
		{"version", "this build reads case version", func(c *spec.Case) { c.Version = 99 }},
		{"op", "want moe_router", func(c *spec.Case) { c.Op = "moe_route" }},
		{"relation", "checks batch_invariance", func(c *spec.Case) { c.Relation = "padding" }},
		{"targets", "names exactly one", func(c *spec.Case) { c.Targets = append(c.Targets, "oracle-moe_router") }},
		{"targets[0]", "is not a target name", func(c *spec.Case) { c.Targets = []string{"a b"} }},
		{"shape.rows", "0, want 1..65536", func(c *spec.Case) { c.Shape.Rows = 0 }},
		{"shape.rows", "1000000000, want 1..65536", func(c *spec.Case) { c.Shape.Rows = 1e9 }},
		{"shape", "rows and dims only", func(c *spec.Case) { c.Shape.Hidden = 7 }},
		{"shape.dims", "has no dimension \"heads\"", func(c *spec.Case) { c.Shape.Dims["heads"] = 2 }},
		{"shape.dims.top_k", "missing", func(c *spec.Case) { delete(c.Shape.Dims, "top_k") }},
		{"shape.dims", "top_k = 40, want 1..experts (32)", func(c *spec.Case) { c.Shape.Dims["top_k"] = 40 }},
		{"shape", "above the case budget", func(c *spec.Case) {
			c.Shape.Rows, c.Shape.Dims["hidden"], c.Shape.Dims["experts"] = 1<<16, 1<<16, 1<<16
		}},
		{"in", "takes", func(c *spec.Case) { c.In = "fp64" }},
		{"out", "declares no output dtype", func(c *spec.Case) { c.Out = "fp32" }},
		{"rel", "no compare, eps, data", func(c *spec.Case) { c.Rel.Pad = 70 }},
		{"dist", "draws", func(c *spec.Case) { c.Dist = "boundary" }},
		{"draw", "is one draw", func(c *spec.Case) { c.Draw = 2 }},
		{"gen_version", "draw with generator version", func(c *spec.Case) { c.GenVersion = 1 }},
	} {
		c := good()
		c.Shape.Dims = map[string]int{"experts": 32, "hidden": 512, "top_k": 2}
		tc.edit(&c)
		err := ops.CheckCase(moerouter.Op{}, c)
		var fe *spec.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: %v, want field %s: ...%s...", tc.field, err, tc.field, tc.want)
		}
	}
	q := spec.Case{Version: spec.CaseVersion, Op: "quant_fp8", Relation: spec.RelBatchInvariance, Targets: []string{"quant-fp8-per-tensor"},
		Shape: spec.Shape{Rows: 3, Dims: map[string]int{"hidden": 64}}, In: "bf16", Dist: "outlier", GenVersion: spec.GeneratorVersion}
	if err := ops.CheckCase(quantfp8.Op{}, q); err != nil {
		t.Errorf("a quant_fp8 case with out left empty: %v", err)
	}
}
