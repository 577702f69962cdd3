package ops

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// MaxItems bounds the batch of a case or a scan of an op package's op.
const MaxItems = 1 << 16

// MaxCaseWork bounds the CPU work of one case of an op package's op: its
// rows' Work, twice (the batch, then each item alone). A case file from
// elsewhere may claim sizes that would take hours or GiBs; this refuses
// it before any input exists (about a minute of one core at the bound).
const MaxCaseWork = 1 << 34

// CheckCase checks c against the contract of a case of op (a case of an
// op package's op: batch invariance of c.Shape.Rows items of one seeded
// draw), the same wherever such a case is drawn, shrunk, read from a
// case file or replayed:
//
//   - version is spec.CaseVersion, op is op's name, relation is
//     batch_invariance, exactly one target (a valid name);
//   - shape holds rows in 1..MaxItems and dims, every dimension of the op
//     (Record.Dims) and no other, that op.Columns accepts; no other shape
//     field;
//   - in is one of the op's input dtypes, out equals in (or is empty),
//     no compare, eps, explicit data or relation parameters;
//   - dist is one of the op's draws, gen_version spec.GeneratorVersion
//     (another generator draws other values), no sensitive chain (draw);
//   - 2 · rows · Work(dims) <= MaxCaseWork.
//
// It returns a *spec.FieldError naming the first field that breaks a rule.
func CheckCase(op Op, c spec.Case) error {
	rec := op.Record()
	if c.Version != spec.CaseVersion {
		return fieldErr("version", "%d, this build reads case version %d", c.Version, spec.CaseVersion)
	}
	if c.Op != spec.Op(rec.Name) {
		return fieldErr("op", "%q, want %s", c.Op, rec.Name)
	}
	if c.Relation != spec.RelBatchInvariance {
		return fieldErr("relation", "%q: a case of %s checks %s", c.Relation, rec.Name, spec.RelBatchInvariance)
	}
	if len(c.Targets) != 1 {
		return fieldErr("targets", "%d targets, a case of %s names exactly one", len(c.Targets), rec.Name)
	}
	if !spec.ValidName(c.Targets[0]) {
		return fieldErr("targets[0]", "%.64q is not a target name (1..%d printable ASCII characters, no spaces)", c.Targets[0], spec.MaxNameLen)
	}
	if err := checkCaseShape(op, c.Shape); err != nil {
		return err
	}
	if !slices.ContainsFunc(rec.In, func(d oracle.DType) bool { return d.String() == string(c.In) }) {
		return fieldErr("in", "%q: %s takes %v", c.In, rec.Name, rec.In)
	}
	if c.Out != "" && c.Out != c.In {
		return fieldErr("out", "%q: a case of %s declares no output dtype but in's (%s)", c.Out, rec.Name, c.In)
	}
	if c.Compare != "" || c.Eps != 0 || c.Data != nil || !reflect.DeepEqual(c.Rel, spec.RelParams{}) {
		return fieldErr("rel", "a case of %s has no compare, eps, data or relation parameters", rec.Name)
	}
	if !slices.Contains(rec.Dists, string(c.Dist)) {
		return fieldErr("dist", "%q: %s draws %v", c.Dist, rec.Name, rec.Dists)
	}
	if c.Draw != 0 {
		return fieldErr("draw", "%d: a case of %s is one draw", c.Draw, rec.Name)
	}
	if c.GenVersion != spec.GeneratorVersion {
		return fieldErr("gen_version", "%d, the op packages draw with generator version %d", c.GenVersion, spec.GeneratorVersion)
	}
	if w := op.Work(Shape(c.Shape.Dims)); w > MaxCaseWork/int64(2*c.Shape.Rows) {
		return fieldErr("shape", "%d %ss at %s is %d row operations, above the case budget %d", c.Shape.Rows, rec.Item,
			Shape(c.Shape.Dims), 2*int64(c.Shape.Rows)*w, int64(MaxCaseWork))
	}
	return nil
}

// checkCaseShape checks the shape of a case of op (CheckCase).
func checkCaseShape(op Op, s spec.Shape) error {
	rec := op.Record()
	if s.Rows < 1 || s.Rows > MaxItems {
		return fieldErr("shape.rows", "%d, want 1..%d", s.Rows, MaxItems)
	}
	if !reflect.DeepEqual(s, spec.Shape{Rows: s.Rows, Dims: s.Dims}) {
		return fieldErr("shape", "a case of %s has rows and dims only", rec.Name)
	}
	for k := range s.Dims {
		if !slices.ContainsFunc(rec.Dims, func(d Dim) bool { return d.Name == k }) {
			return fieldErr("shape.dims", "%s has no dimension %.64q", rec.Name, k)
		}
	}
	for _, d := range rec.Dims {
		if _, ok := s.Dims[d.Name]; !ok {
			return fieldErr("shape.dims."+d.Name, "missing")
		}
	}
	if _, err := op.Columns(Shape(s.Dims)); err != nil {
		return fieldErr("shape.dims", "%v", err)
	}
	return nil
}

// fieldErr returns a *spec.FieldError naming field.
func fieldErr(field, format string, a ...any) error {
	return &spec.FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}
