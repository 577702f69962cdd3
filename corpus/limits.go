package corpus

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/spec"
)

// Limits on what one case file may hold are spec's (spec.MaxFileBytes,
// spec.MaxElements and the rest). They are checked before anything is
// allocated from a value the file claims: a file larger than
// spec.MaxFileBytes is refused before it is read, and a shape whose batches
// would need more than spec.MaxElements input values is refused before any
// tensor exists.

// fieldError is a validation error that names the field it is about, e.g.
// "case.shape.rows: -1, want >= 0".
type fieldError struct {
	Field string
	Msg   string
}

func (e *fieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, a ...any) error {
	return &fieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// mulCap returns the product of xs, or ok=false when it is negative or
// exceeds limit (overflow-safe).
func mulCap(limit int, xs ...int) (int, bool) {
	p := 1
	for _, x := range xs {
		if x < 0 {
			return 0, false
		}
		if x != 0 && p > limit/x {
			return 0, false
		}
		p *= x
	}
	return p, p <= limit
}

func validName(s string) bool {
	if s == "" || len(s) > spec.MaxNameLen {
		return false
	}
	for _, r := range s {
		if r < 0x21 || r > 0x7e {
			return false
		}
	}
	return true
}

// ValidateCase checks a case against the schema and the shape limits: the op
// (one of spec.Ops, or spec.OpModel, whose shape, relation parameters and
// data external.ValidateModelCase checks), relation, dtypes and
// distribution are known, every dimension is within range, the batches the
// relation asks for (rows, Rel.Batch, Rel.Pad) fit in spec.MaxElements
// input values, and explicit data has valid hex of the input dtype and
// exactly the element counts the shape needs. Errors name
// the field (prefixed by prefix, e.g. "case").
func ValidateCase(prefix string, c spec.Case) error {
	f := func(name string) string { return prefix + "." + name }
	if c.Version != spec.CaseVersion {
		return fieldErr(f("version"), "%d, this build reads case version %d", c.Version, spec.CaseVersion)
	}
	if !contains(spec.Ops, c.Op) && c.Op != spec.OpModel {
		return fieldErr(f("op"), "unknown op %q (want one of %v, or %s)", c.Op, spec.Ops, spec.OpModel)
	}
	if !contains(spec.Relations, c.Relation) {
		return fieldErr(f("relation"), "unknown relation %q (want one of %v)", c.Relation, spec.Relations)
	}
	if len(c.Targets) == 0 || len(c.Targets) > spec.MaxTargets {
		return fieldErr(f("targets"), "%d targets, want 1..%d", len(c.Targets), spec.MaxTargets)
	}
	for i, t := range c.Targets {
		if !validName(t) {
			return fieldErr(fmt.Sprintf("%s[%d]", f("targets"), i), "%q is not a target name (1..%d printable ASCII characters, no spaces)", truncate(t), spec.MaxNameLen)
		}
	}
	for _, d := range []struct {
		name string
		v    spec.DType
		opt  bool
	}{{"in", c.In, false}, {"out", c.Out, false}, {"compare", c.Compare, true}} {
		if d.opt && d.v == "" {
			continue
		}
		if d.v != spec.BF16 && d.v != spec.FP16 && d.v != spec.FP32 {
			return fieldErr(f(d.name), "unknown dtype %q (want bf16, fp16 or fp32)", truncate(string(d.v)))
		}
	}
	if math.IsNaN(float64(c.Eps)) || math.IsInf(float64(c.Eps), 0) || c.Eps < 0 {
		return fieldErr(f("eps"), "%v, want a finite value >= 0", c.Eps)
	}
	if c.Dist != "" && !contains(spec.Dists, c.Dist) {
		return fieldErr(f("dist"), "unknown distribution %q", truncate(string(c.Dist)))
	}
	if c.GenVersion < 0 {
		return fieldErr(f("gen_version"), "%d, want >= 0", c.GenVersion)
	}
	if c.Op == spec.OpModel {
		return validateModel(prefix, c)
	}
	width, err := validateShape(prefix, c)
	if err != nil {
		return err
	}
	if err := validateRel(prefix, c, width); err != nil {
		return err
	}
	if c.Data != nil {
		if err := validateData(prefix, c); err != nil {
			return err
		}
	}
	return nil
}

// validateModel checks a model-route case with the route's own check
// (external.ValidateModelCase: spec's model bounds), naming the field under
// prefix.
func validateModel(prefix string, c spec.Case) error {
	err := external.ValidateModelCase(c)
	var fe *external.FieldError
	if errors.As(err, &fe) {
		return fieldErr(prefix+"."+fe.Field, "%s", fe.Msg)
	}
	return err
}

// validateShape checks the dimensions of c and returns the number of input
// values one row of the batch needs (the width used to bound other batch
// sizes).
func validateShape(prefix string, c spec.Case) (int, error) {
	s := c.Shape
	f := func(name string) string { return prefix + ".shape." + name }
	dims := []struct {
		name string
		v    int
		need bool
	}{
		{"rows", s.Rows, c.Op != spec.OpAttnPrefill},
		{"hidden", s.Hidden, c.Op == spec.OpRMSNorm || c.Op == spec.OpGEMM},
		{"n", s.N, c.Op == spec.OpGEMM},
		{"vocab", s.Vocab, c.Op == spec.OpLogProb},
		{"seqs", s.Seqs, c.Op == spec.OpAttnPrefill},
		{"seq_len", s.SeqLen, c.Op == spec.OpAttnPrefill},
		{"kv", s.KV, c.Op == spec.OpAttnDecode && len(s.KVLens) == 0},
		{"heads", s.Heads, c.Op == spec.OpAttnPrefill || c.Op == spec.OpAttnDecode},
		{"kv_heads", s.KVHeads, c.Op == spec.OpAttnPrefill || c.Op == spec.OpAttnDecode},
		{"head_dim", s.HeadDim, c.Op == spec.OpAttnPrefill || c.Op == spec.OpAttnDecode},
	}
	for _, d := range dims {
		if d.v < 0 || d.v > spec.MaxElements {
			return 0, fieldErr(f(d.name), "%d, want 0..%d", d.v, spec.MaxElements)
		}
		if d.need && d.v < 1 {
			return 0, fieldErr(f(d.name), "%d, op %s needs >= 1", d.v, c.Op)
		}
	}
	if len(s.KVLens) > spec.MaxListLen {
		return 0, fieldErr(f("kv_lens"), "%d entries, want at most %d", len(s.KVLens), spec.MaxListLen)
	}
	for i, l := range s.KVLens {
		if l < 1 || l > spec.MaxElements {
			return 0, fieldErr(fmt.Sprintf("%s[%d]", f("kv_lens"), i), "%d, want 1..%d", l, spec.MaxElements)
		}
	}
	if (c.Op == spec.OpAttnPrefill || c.Op == spec.OpAttnDecode) && s.Heads%s.KVHeads != 0 {
		return 0, fieldErr(f("heads"), "%d is not a multiple of kv_heads %d", s.Heads, s.KVHeads)
	}
	tooBig := func(what string) error {
		return fieldErr(prefix+".shape", "%s %+v needs more than %d input values (%s), the limit of one case", c.Op, s, spec.MaxElements, what)
	}
	lim := spec.MaxElements
	switch c.Op {
	case spec.OpRMSNorm:
		if _, ok := mulCap(lim, s.Rows+1, s.Hidden); !ok {
			return 0, tooBig("rows x hidden")
		}
		return s.Hidden, nil
	case spec.OpGEMM:
		a, ok1 := mulCap(lim, s.Rows, s.Hidden)
		b, ok2 := mulCap(lim, s.Hidden, s.N)
		o, ok3 := mulCap(lim, s.Rows, s.N)
		if !ok1 || !ok2 || !ok3 || a > lim-b || a+b > lim-o {
			return 0, tooBig("x, w and y")
		}
		return s.Hidden + s.N, nil
	case spec.OpLogProb:
		if _, ok := mulCap(lim, s.Rows, s.Vocab); !ok {
			return 0, tooBig("rows x vocab")
		}
		return s.Vocab, nil
	case spec.OpAttnPrefill:
		w, ok := mulCap(lim, s.Heads+2*s.KVHeads, s.HeadDim)
		if !ok {
			return 0, tooBig("per token")
		}
		if _, ok := mulCap(lim, s.Seqs, s.SeqLen, w); !ok {
			return 0, tooBig("q, k and v")
		}
		return w, nil
	case spec.OpAttnDecode:
		kvw, ok := mulCap(lim, 2*s.KVHeads, s.HeadDim)
		if !ok {
			return 0, tooBig("per kv token")
		}
		maxKV := s.KV
		for _, l := range s.KVLens {
			maxKV = max(maxKV, l)
		}
		qw, ok1 := mulCap(lim, s.Heads, s.HeadDim)
		perRow, ok2 := mulCap(lim, maxKV, kvw)
		if !ok1 || !ok2 || qw > lim-perRow {
			return 0, tooBig("per request")
		}
		if _, ok := mulCap(lim, s.Rows, qw+perRow); !ok {
			return 0, tooBig("q, k and v")
		}
		return qw + perRow, nil
	}
	return 0, fieldErr(prefix+".op", "unknown op %q", c.Op)
}

// validateRel checks the relation parameters: indices in range, and the
// other batches (Batch, Pad rows of width values) within spec.MaxElements.
func validateRel(prefix string, c spec.Case, width int) error {
	r := c.Rel
	f := func(name string) string { return prefix + ".rel." + name }
	rows := c.Shape.Rows
	if c.Op == spec.OpAttnPrefill {
		rows = c.Shape.Seqs
	}
	for _, d := range []struct {
		name string
		v    int
	}{{"row", r.Row}, {"batch", r.Batch}, {"position", r.Position}, {"pad", r.Pad}} {
		if d.v < 0 || d.v > spec.MaxElements {
			return fieldErr(f(d.name), "%d, want 0..%d", d.v, spec.MaxElements)
		}
	}
	for _, d := range []struct {
		name string
		v    int
	}{{"batch", r.Batch}, {"pad", r.Pad}} {
		if _, ok := mulCap(spec.MaxElements, d.v, max(width, 1)); !ok {
			return fieldErr(f(d.name), "%d rows of %d input values each exceed the limit of %d values", d.v, width, spec.MaxElements)
		}
	}
	if len(r.Filler) > spec.MaxNameLen {
		return fieldErr(f("filler"), "longer than %d bytes", spec.MaxNameLen)
	}
	if len(r.Mask) > spec.MaxListLen {
		return fieldErr(f("mask"), "%d entries, want at most %d", len(r.Mask), spec.MaxListLen)
	}
	for i, m := range r.Mask {
		if m < 0 || m >= max(rows, r.Batch, r.Pad) {
			return fieldErr(fmt.Sprintf("%s[%d]", f("mask"), i), "%d, want a row index in [0,%d)", m, max(rows, r.Batch, r.Pad))
		}
	}
	return nil
}

// tensorCounts returns the explicit tensors op c.Op needs and how many
// values each has (validateShape has bounded every product).
func tensorCounts(c spec.Case) map[string]int {
	s := c.Shape
	switch c.Op {
	case spec.OpRMSNorm:
		return map[string]int{"x": s.Rows * s.Hidden, "w": s.Hidden}
	case spec.OpGEMM:
		return map[string]int{"x": s.Rows * s.Hidden, "w": s.Hidden * s.N}
	case spec.OpLogProb:
		return map[string]int{"logits": s.Rows * s.Vocab, "targets": s.Rows}
	case spec.OpAttnPrefill:
		t := s.Seqs * s.SeqLen
		return map[string]int{"q": t * s.Heads * s.HeadDim, "k": t * s.KVHeads * s.HeadDim, "v": t * s.KVHeads * s.HeadDim}
	case spec.OpAttnDecode:
		total := 0
		for r := 0; r < s.Rows; r++ {
			l := s.KV
			if len(s.KVLens) > 0 {
				l = s.KVLens[r%len(s.KVLens)]
			}
			total += l
			if total > spec.MaxFileBytes { // more values than any file can hold: the count check fails anyway
				break
			}
		}
		return map[string]int{"q": s.Rows * s.Heads * s.HeadDim, "k": total * s.KVHeads * s.HeadDim, "v": total * s.KVHeads * s.HeadDim}
	}
	return nil
}

// validateData checks explicit tensors: exactly the names the op needs,
// exactly the counts its shape needs, every value valid hex bits of the
// input dtype (targets: decimal ids in [0, vocab)).
func validateData(prefix string, c spec.Case) error {
	f := prefix + ".data.tensors"
	want := tensorCounts(c)
	for name := range c.Data.Tensors {
		if _, ok := want[name]; !ok {
			return fieldErr(f, "tensor %q is not an input of %s (want %v)", truncate(name), c.Op, keys(want))
		}
	}
	bits := 16
	if c.In == spec.FP32 {
		bits = 32
	}
	for _, name := range keys(want) {
		vals, ok := c.Data.Tensors[name]
		if !ok {
			return fieldErr(f, "tensor %q missing", name)
		}
		if len(vals) != want[name] {
			return fieldErr(f+"."+name, "%d values, shape %+v needs %d", len(vals), c.Shape, want[name])
		}
		for i, v := range vals {
			if name == "targets" {
				id, err := strconv.ParseInt(v, 10, 32)
				if err != nil || id < 0 || int(id) >= c.Shape.Vocab {
					return fieldErr(fmt.Sprintf("%s.%s[%d]", f, name, i), "%q, want a decimal id in [0,%d)", truncate(v), c.Shape.Vocab)
				}
				continue
			}
			if _, err := parseBits(v, bits); err != nil {
				return fieldErr(fmt.Sprintf("%s.%s[%d]", f, name, i), "%q is not %d-bit hex of %s: %v", truncate(v), bits, c.In, err)
			}
		}
	}
	return nil
}

// parseBits parses hex bits (with or without 0x) of the given width.
func parseBits(s string, bits int) (uint64, error) {
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = s[2:]
	}
	if len(s) == 0 || len(s) > bits/4 {
		return 0, fmt.Errorf("want 1..%d hex digits", bits/4)
	}
	return strconv.ParseUint(s, 16, bits)
}

func contains[T comparable](xs []T, x T) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func keys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// truncate shortens a hostile string for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
