package spec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Filler names the kind of padding rows a padded batch adds
// (RelParams.Filler).
type Filler string

const (
	FillerZeros  Filler = "zeros"  // +0 in every column
	FillerCopy   Filler = "copy"   // copies of the case's own items
	FillerNormal Filler = "normal" // the case's next items, drawn as its own
	FillerHuge   Filler = "huge"   // the dtype's largest finite value
	FillerNaN    Filler = "nan"    // quiet NaN
)

// Fillers lists every filler, simplest first.
var Fillers = []Filler{FillerZeros, FillerCopy, FillerNormal, FillerHuge, FillerNaN}

// Valid reports whether f is one of Fillers.
func (f Filler) Valid() bool { return slices.Contains(Fillers, f) }

// ParseFiller returns the filler named s, or an error naming the known ones.
func ParseFiller(s string) (Filler, error) {
	if f := Filler(s); f.Valid() {
		return f, nil
	}
	return "", fmt.Errorf("unknown filler %q (want one of %v)", truncate(s), Fillers)
}

// FieldError is an invalid field of a case, named as in the case's JSON
// ("shape.rows", "rel.mask[1]", "data.tensors.x"). A caller that reads the
// case from a larger document prefixes Field with its path.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// SatLimit is where SatMul and SatAdd saturate: far above any limit of a
// case, far below int overflow.
const SatLimit = 1 << 62

// SatMul is the product of xs, saturating at SatLimit; a negative factor
// counts as SatLimit (never a small, valid-looking size), a zero factor
// makes it 0. Every size computed from a case's claims goes through it (or
// SatAdd), so a hostile shape cannot wrap int into a small number.
func SatMul(xs ...int) int {
	p := 1
	for _, x := range xs {
		switch {
		case x < 0:
			return SatLimit
		case x == 0:
			return 0
		case p > SatLimit/x:
			return SatLimit
		}
		p *= x
	}
	return min(p, SatLimit)
}

// SatAdd is the sum of xs, saturating at SatLimit (a negative term counts
// as SatLimit).
func SatAdd(xs ...int) int {
	s := 0
	for _, x := range xs {
		if x < 0 || s > SatLimit-x {
			return SatLimit
		}
		s += x
	}
	return s
}

// Elements returns the input values the relation of single-op case c
// materializes, GEMM's output not counted (it is not an input):
//
//	(BatchRows + Rel.Batch + Rel.Pad) · item + shared
//
// with item and shared from the op's OpInfo.Elements (weights once),
// saturating (SatMul, SatAdd); 0 for a composite or unknown op.
// Validate keeps it <= MaxElements.
func (c Case) Elements() int {
	o, ok := c.Op.Info()
	if !ok || o.Composite {
		return 0
	}
	item, shared := o.Elements(c.Shape)
	return SatAdd(SatMul(SatAdd(o.Batch.Get(c.Shape), c.Rel.Batch, c.Rel.Pad), item), shared)
}

// Validate checks c against the one case contract, the same wherever a
// case is generated, shrunk, decoded from a file or go test fuzz bytes,
// imported or replayed, and before anything is allocated from a value it
// claims. It returns a *FieldError naming the first field that breaks a
// rule:
//
//   - version is CaseVersion; op is a single op (Ops) or OpModel (not
//     OpTransformer);
//     relation is one of Relations; at most MaxTargets targets, each 1 to
//     MaxNameLen printable ASCII characters without spaces (none: the
//     caller names them, as for a generated case; a case file must name
//     them); in and out are bf16, fp16 or fp32, compare one of those or
//     empty; eps finite and >= 0; dist one of Dists (empty only with
//     explicit data); gen_version >= 0.
//   - a model case (OpModel) obeys the model route's rules (see
//     validateModel and the MaxModel* limits).
//   - every dimension the op reads (OpInfo.Reads) is in 1..MaxElements
//     (kv may be 0 when kv_lens is set) and every other one is zero;
//     kv_lens only for attn_decode, at most
//     MaxListLen entries each in 1..MaxElements; heads a multiple of
//     kv_heads.
//   - rel.row < BatchRows; rel.batch >= 1 and rel.position < rel.batch
//     for batch_invariance, batch, position and perm_seed zero otherwise;
//     rel.pad > BatchRows and a known rel.filler the op accepts for
//     padding, both unset otherwise; rel.mask, for logprob_parity only,
//     at most MaxListLen ascending rows in [0, BatchRows).
//   - c.Elements() <= MaxElements: the case's own batch, then with
//     rel.batch and rel.pad rows.
//   - explicit data has exactly the tensors the op needs (OpInfo.Tensors)
//     with exactly their counts, every value hex bits of the input dtype
//     (targets: decimal ids in [0, vocab)).
func (c Case) Validate() error {
	if c.Version != CaseVersion {
		return fieldErr("version", "%d, this build reads case version %d", c.Version, CaseVersion)
	}
	o, ok := c.Op.Info()
	if !ok {
		return fieldErr("op", "unknown op %q (want one of %v, or %s)", truncate(string(c.Op)), Ops, OpModel)
	}
	if c.Op == OpTransformer {
		return fieldErr("op", "%s: a transformer case is checked by its own route (package fuzz/transformer) and not stored", c.Op)
	}
	if !slices.Contains(Relations, c.Relation) && !(c.Op == OpModel && c.Relation == "") {
		return fieldErr("relation", "unknown relation %q (want one of %v)", truncate(c.Relation), Relations)
	}
	if len(c.Targets) > MaxTargets {
		return fieldErr("targets", "%d targets, want 1..%d", len(c.Targets), MaxTargets)
	}
	for i, t := range c.Targets {
		if !ValidName(t) {
			return fieldErr(fmt.Sprintf("targets[%d]", i), "%q is not a target name (1..%d printable ASCII characters, no spaces)", truncate(t), MaxNameLen)
		}
	}
	for _, d := range []struct {
		name string
		v    DType
		opt  bool
	}{{"in", c.In, false}, {"out", c.Out, false}, {"compare", c.Compare, true}} {
		if d.opt && d.v == "" {
			continue
		}
		if d.v != BF16 && d.v != FP16 && d.v != FP32 {
			return fieldErr(d.name, "unknown dtype %q (want bf16, fp16 or fp32)", truncate(string(d.v)))
		}
	}
	if math.IsNaN(float64(c.Eps)) || math.IsInf(float64(c.Eps), 0) || c.Eps < 0 {
		return fieldErr("eps", "%v, want a finite value >= 0", c.Eps)
	}
	if !slices.Contains(Dists, c.Dist) && !(c.Dist == "" && (c.Data != nil || c.Op == OpModel)) {
		return fieldErr("dist", "unknown distribution %q (want one of %v)", truncate(string(c.Dist)), Dists)
	}
	if c.Draw < 0 || c.Draw > MaxDraw || c.Draw > 0 && c.Dist != DistSensitive {
		return fieldErr("draw", "%d, want 0, or 1..%d for dist %s", c.Draw, MaxDraw, DistSensitive)
	}
	if c.GenVersion < 0 {
		return fieldErr("gen_version", "%d, want >= 0", c.GenVersion)
	}
	if c.Op == OpModel {
		return validateModel(c)
	}
	if err := validateShape(c, o); err != nil {
		return err
	}
	if err := validateRel(c, o); err != nil {
		return err
	}
	if err := validateElements(c, o); err != nil {
		return err
	}
	if c.Data != nil {
		return validateData(c, o)
	}
	return nil
}

// validateShape checks the dimensions of single-op case c.
func validateShape(c Case, o OpInfo) error {
	s := c.Shape
	for _, d := range Dims {
		v := d.Get(s)
		reads := slices.ContainsFunc(o.Reads, func(r Dim) bool { return r.Name == d.Name })
		// kv_lens, when set, gives every request's cache length: kv may
		// then be 0
		optional := d.Name == DimKV.Name && len(s.KVLens) > 0
		switch {
		case v < 0 || v > MaxElements:
			return fieldErr("shape."+d.Name, "%d, want 0..%d", v, MaxElements)
		case reads && v < 1 && !optional:
			return fieldErr("shape."+d.Name, "%d, op %s needs >= 1", v, c.Op)
		case !reads && v != 0:
			return fieldErr("shape."+d.Name, "%d, want 0: op %s does not read it", v, c.Op)
		}
	}
	if len(s.KVLens) > 0 && !o.KVLens {
		return fieldErr("shape.kv_lens", "set, but op %s does not read it", c.Op)
	}
	if len(s.KVLens) > MaxListLen {
		return fieldErr("shape.kv_lens", "%d entries, want at most %d", len(s.KVLens), MaxListLen)
	}
	for i, l := range s.KVLens {
		if l < 1 || l > MaxElements {
			return fieldErr(fmt.Sprintf("shape.kv_lens[%d]", i), "%d, want 1..%d", l, MaxElements)
		}
	}
	if s.KVHeads > 0 && s.Heads%s.KVHeads != 0 {
		return fieldErr("shape.heads", "%d is not a multiple of kv_heads %d", s.Heads, s.KVHeads)
	}
	return nil
}

// validateRel checks the relation parameters of single-op case c.
func validateRel(c Case, o OpInfo) error {
	r := c.Rel
	rows := o.Batch.Get(c.Shape)
	for _, d := range []struct {
		name string
		v    int
	}{{"row", r.Row}, {"batch", r.Batch}, {"position", r.Position}, {"pad", r.Pad}} {
		if d.v < 0 || d.v > MaxElements {
			return fieldErr("rel."+d.name, "%d, want 0..%d", d.v, MaxElements)
		}
	}
	if r.Row >= rows {
		return fieldErr("rel.row", "%d outside the batch of %d", r.Row, rows)
	}
	if c.Relation == RelBatchInvariance {
		if r.Batch < 1 {
			return fieldErr("rel.batch", "%d, %s needs >= 1", r.Batch, RelBatchInvariance)
		}
		if r.Position >= r.Batch {
			return fieldErr("rel.position", "%d outside the other batch of %d", r.Position, r.Batch)
		}
	} else {
		for _, u := range []struct {
			name string
			set  bool
		}{{"batch", r.Batch != 0}, {"position", r.Position != 0}, {"perm_seed", r.PermSeed != 0}} {
			if u.set {
				return fieldErr("rel."+u.name, "set, but it belongs to %s only", RelBatchInvariance)
			}
		}
	}
	if c.Relation == RelPadding {
		if r.Pad <= rows {
			return fieldErr("rel.pad", "%d, want more than the %d rows", r.Pad, rows)
		}
		f, err := ParseFiller(string(r.Filler))
		if err != nil {
			return fieldErr("rel.filler", "%v", err)
		}
		if !slices.Contains(o.Fillers, f) {
			return fieldErr("rel.filler", "%s: op %s pads with %v only", f, c.Op, o.Fillers)
		}
	} else {
		if r.Pad != 0 {
			return fieldErr("rel.pad", "set, but it belongs to %s only", RelPadding)
		}
		if r.Filler != "" {
			return fieldErr("rel.filler", "set, but it belongs to %s only", RelPadding)
		}
	}
	if len(r.Mask) > MaxListLen {
		return fieldErr("rel.mask", "%d entries, want at most %d", len(r.Mask), MaxListLen)
	}
	for i, m := range r.Mask {
		if m < 0 || m >= rows {
			return fieldErr(fmt.Sprintf("rel.mask[%d]", i), "%d, want a row index in [0,%d)", m, rows)
		}
		if i > 0 && m <= r.Mask[i-1] {
			return fieldErr(fmt.Sprintf("rel.mask[%d]", i), "%d, want ascending rows (after %d)", m, r.Mask[i-1])
		}
	}
	if len(r.Mask) > 0 && c.Relation != RelLogProbParity {
		return fieldErr("rel.mask", "set, but it belongs to %s only", RelLogProbParity)
	}
	return nil
}

// validateElements checks c.Elements() <= MaxElements, naming the shape
// when the case's own batch is too large and else the relation's extra
// rows.
func validateElements(c Case, o OpInfo) error {
	item, shared := o.Elements(c.Shape)
	own := SatAdd(SatMul(o.Batch.Get(c.Shape), item), shared)
	if own > MaxElements {
		return fieldErr("shape", "%s %s needs more than %d input values, the limit of one case", c.Op, shapeWords(c.Shape), MaxElements)
	}
	if e := c.Elements(); e > MaxElements {
		field := "rel.pad"
		if c.Rel.Batch > 0 {
			field = "rel.batch"
		}
		return fieldErr(field, "%d input values with the relation's %d extra rows of %d values each, more than the limit of %d",
			e, c.Rel.Batch+c.Rel.Pad, item, MaxElements)
	}
	return nil
}

// validateData checks explicit tensors: exactly the names the op needs,
// exactly the counts its shape needs, every value valid hex bits of the
// input dtype (targets: decimal ids in [0, vocab)).
func validateData(c Case, o OpInfo) error {
	const f = "data.tensors"
	want := o.Tensors(c.Shape)
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	slices.Sort(names)
	for name := range c.Data.Tensors {
		if _, ok := want[name]; !ok {
			return fieldErr(f, "tensor %q is not an input of %s (want %v)", truncate(name), c.Op, names)
		}
	}
	bits := 16
	if c.In == FP32 {
		bits = 32
	}
	for _, name := range names {
		vals, ok := c.Data.Tensors[name]
		if !ok {
			return fieldErr(f, "tensor %q missing", name)
		}
		if len(vals) != want[name] {
			return fieldErr(f+"."+name, "%d values, shape %s needs %d", len(vals), shapeWords(c.Shape), want[name])
		}
		for i, v := range vals {
			if name == "targets" {
				id, err := strconv.ParseInt(v, 10, 32)
				if err != nil || id < 0 || int(id) >= c.Shape.Vocab {
					return fieldErr(fmt.Sprintf("%s.%s[%d]", f, name, i), "%q, want a decimal id in [0,%d)", truncate(v), c.Shape.Vocab)
				}
				continue
			}
			if _, err := ParseBits(v, bits); err != nil {
				return fieldErr(fmt.Sprintf("%s.%s[%d]", f, name, i), "%q is not %d-bit hex of %s: %v", truncate(v), bits, c.In, err)
			}
		}
	}
	return nil
}

// validateModel checks a model-route case (OpModel; fuzz/external runs
// it): what it asks of a team's adapter. No explicit data (the plan
// derives from the seed); one target; relation logprob_parity or
// path_parity (empty: logprob_parity); every dimension within the model
// bounds (MaxModelLayers and the rest), heads a multiple of kv_heads,
// seq_len >= 2 (a prompt and a response); at most MaxElements parameters
//
//	vocab·hidden·2 + layers·(hidden·(heads+2·kv_heads)·head_dim + heads·head_dim·hidden + 3·hidden·ffn)
//
// and at most MaxElements activations at one tap site (seqs·seq_len tokens
// times the widest of hidden, ffn, vocab and heads·head_dim); rel.pad in
// 0..MaxModelPad; at most MaxListLen rel.mask positions, each below
// seqs·(seq_len-1) (the response positions a plan can have; the run checks
// the plan's exact count); and every field the route does not read
// (shape.kv, shape.kv_lens, rel.row, rel.batch, rel.position, rel.filler,
// rel.perm_seed) zero.
func validateModel(c Case) error {
	if c.Data != nil {
		return fieldErr("data", "explicit data is not supported: the plan derives from the seed")
	}
	if len(c.Targets) != 1 {
		return fieldErr("targets", "%d targets, want one model route", len(c.Targets))
	}
	if r := c.Relation; r != "" && r != RelLogProbParity && r != RelPathParity {
		return fieldErr("relation", "%q, want %s or %s", r, RelLogProbParity, RelPathParity)
	}
	s := c.Shape
	for _, d := range []struct {
		dim   Dim
		max   int
		means string
	}{{DimRows, MaxModelLayers, "layers"}, {DimHidden, MaxModelHidden, "model width"}, {DimN, MaxModelFFN, "MLP width"},
		{DimVocab, MaxModelVocab, "vocabulary"}, {DimHeads, MaxModelHeads, "query heads"}, {DimKVHeads, MaxModelHeads, "key/value heads"},
		{DimHeadDim, MaxModelHeadDim, "head dim"}, {DimSeqs, MaxModelRequests, "requests"}, {DimSeqLen, MaxModelSeqLen, "longest request"}} {
		if v := d.dim.Get(s); v < 1 || v > d.max {
			return fieldErr("shape."+d.dim.Name, "%d, want 1..%d (%s)", v, d.max, d.means)
		}
	}
	if s.SeqLen < 2 {
		return fieldErr("shape.seq_len", "%d, want >= 2 (a prompt and a response)", s.SeqLen)
	}
	if s.Heads%s.KVHeads != 0 {
		return fieldErr("shape.heads", "%d is not a multiple of kv_heads %d", s.Heads, s.KVHeads)
	}
	if s.KV != 0 || len(s.KVLens) > 0 {
		return fieldErr("shape.kv", "not read by op %s: want it absent", OpModel)
	}
	qkv := SatMul(s.Hidden, s.Heads+2*s.KVHeads, s.HeadDim)
	perLayer := SatAdd(qkv, SatMul(s.Heads, s.HeadDim, s.Hidden), SatMul(3, s.Hidden, s.N))
	if p := SatAdd(SatMul(2, s.Vocab, s.Hidden), SatMul(s.Rows, perLayer)); p > MaxElements {
		return fieldErr("shape", "a model of %d layers, hidden %d, ffn %d, vocab %d, %d heads (%d kv) of %d needs more than %d parameters, the limit of one case",
			s.Rows, s.Hidden, s.N, s.Vocab, s.Heads, s.KVHeads, s.HeadDim, MaxElements)
	}
	width := max(s.Hidden, s.N, s.Vocab, s.Heads*s.HeadDim)
	if a := SatMul(s.Seqs, s.SeqLen, width); a > MaxElements {
		return fieldErr("shape", "%d requests of up to %d tokens at width %d need more than %d activations at one tap site, the limit of one case",
			s.Seqs, s.SeqLen, width, MaxElements)
	}
	r := c.Rel
	if r.Pad < 0 || r.Pad > MaxModelPad {
		return fieldErr("rel.pad", "%d, want 0..%d (0: 64)", r.Pad, MaxModelPad)
	}
	if len(r.Mask) > MaxListLen {
		return fieldErr("rel.mask", "%d entries, want at most %d", len(r.Mask), MaxListLen)
	}
	positions := s.Seqs * (s.SeqLen - 1)
	for i, q := range r.Mask {
		if q < 0 || q >= positions {
			return fieldErr(fmt.Sprintf("rel.mask[%d]", i), "%d, want a response position in [0,%d)", q, positions)
		}
	}
	for _, u := range []struct {
		name string
		set  bool
	}{{"row", r.Row != 0}, {"batch", r.Batch != 0}, {"position", r.Position != 0}, {"filler", r.Filler != ""}, {"perm_seed", r.PermSeed != 0}} {
		if u.set {
			return fieldErr("rel."+u.name, "not read by op %s: want it absent", OpModel)
		}
	}
	return nil
}

// ValidName reports whether s is a valid target or other identifier: 1 to
// MaxNameLen printable ASCII characters, no spaces.
func ValidName(s string) bool {
	if s == "" || len(s) > MaxNameLen {
		return false
	}
	for _, r := range s {
		if r < 0x21 || r > 0x7e {
			return false
		}
	}
	return true
}

// ParseBits parses hex bits (with or without 0x) of a value of the given
// width in bits.
func ParseBits(s string, bits int) (uint64, error) {
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = s[2:]
	}
	if len(s) == 0 || len(s) > bits/4 {
		return 0, fmt.Errorf("want 1..%d hex digits", bits/4)
	}
	return strconv.ParseUint(s, 16, bits)
}

// shapeWords names the non-zero dimensions of s, e.g. "rows=4 hidden=64".
func shapeWords(s Shape) string {
	w := ""
	for _, d := range Dims {
		if v := d.Get(s); v != 0 {
			if w != "" {
				w += " "
			}
			w += d.Name + "=" + strconv.Itoa(v)
		}
	}
	if len(s.KVLens) > 0 {
		w += fmt.Sprintf(" kv_lens(%d)", len(s.KVLens))
	}
	return w
}

// truncate shortens a hostile string for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
