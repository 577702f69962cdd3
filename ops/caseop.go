package ops

import (
	"fmt"
	"math/rand/v2"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// CaseOp is an op a spec.Case names (rmsnorm, gemm, logprob, attn_prefill,
// attn_decode): its record is a row of spec's op table, its batch is a
// target.Batch whose Input is one oracle input value (*oracle.RMSNormInput
// and its siblings), passed here as In. An op package implements CaseOp and is
// added to the literal list in ops/all (all.Cases); target and fuzz call
// it instead of switching on the op.
//
// Every method taking an In panics when in is not the op's input type (a
// programming error: target.Batch.Validate checks a batch's input first).
type CaseOp interface {
	// Name is the op's name in case files.
	Name() spec.Op

	// Rows is the number of output rows of in.
	Rows(in In) int
	// Cols is the number of output values of one row.
	Cols(in In) int
	// OutDType is the dtype the outputs are exact in when the case
	// declares out (log-probs are always fp32).
	OutDType(out oracle.DType) oracle.DType
	// Items is the number of items of in: tokens, requests or sequences.
	Items(in In) int
	// RowsPerItem is the number of output rows of one item; item i owns
	// rows [i·RowsPerItem, (i+1)·RowsPerItem).
	RowsPerItem(in In) int
	// ItemValues is the number of input values one item holds; firstKV,
	// when >= 0, is the KV length of the first item of a lazy batch (its
	// cache is not made yet; only a decode batch reads it).
	ItemValues(in In, firstKV int) int
	// Holds reports whether in is a non-nil input of this op.
	Holds(in In) bool

	// Tensors are the recipes of the tensors each item has, from the
	// seed: a token op's one (ItemRows), attention's Q, K and V.
	Tensors(c spec.Case) []Tensor
	// FromSeed is the input of case c with s.Items() items made from its
	// seed with s, after the shape and memory-budget checks, its values
	// of dtype dt and its outputs in dtype out; the shared tensors are
	// like's when like is not nil (an input of the same case). Boundary
	// nudging is Nudge's.
	FromSeed(c spec.Case, dt, out oracle.DType, s Seeded, like In) (In, error)
	// FromData is the input of case c, which carries its tensors
	// (spec.Data, read with e), its outputs in dtype out.
	FromData(c spec.Case, out oracle.DType, e Explicit) (In, error)

	// WireTensors are in's tensors in the process protocol
	// (docs/protocol.md, "request"), in order, and the eps the request
	// carries (rmsnorm's; 0 for an op without one); an error names sizes
	// of in that do not fit together.
	WireTensors(in In) (eps float32, ts []WireTensor, err error)
	// FromWire is the input of a request frame whose tensors w reads
	// (the inverse of WireTensors), its outputs in dtype out.
	FromWire(w Wire, out oracle.DType) (In, error)

	// Nudge steers in, the batch of a boundary case c whose values were
	// drawn normal (dtypes dt -> out), onto rounding boundaries with
	// package boundary and the op's oracle schedule, row by row with
	// n.Each, so that a row's bits depend only on (seed, tensor, item).
	// An op that is not a token op nudges whole batches only (item = i).
	Nudge(c spec.Case, in In, dt, out oracle.DType, n Nudger) error

	// Path is what path parity compares of in: which rows, and the
	// other op that computes them (a prefill's last positions, as a
	// decode of each sequence's last token against its KV cache).
	Path(in In) Path
	// PathNext is the op of the other path of every input's Path (its
	// Next): attn_prefill's attn_decode; "" for an op with none.
	PathNext() spec.Op

	// Schedule is the fixed schedule of the op's oracle target.
	Schedule() oracle.Schedule
	// ParseSchedule reads a schedule in the form its String method writes.
	ParseSchedule(s string) (oracle.Schedule, error)
	// Reference runs the oracle with schedule s on rows sel of in, in
	// fp32 (before rounding to the output dtype), with its fp32 taps
	// (tapCols of them a row); taps nil: the op has none besides its fp32
	// outputs.
	Reference(in In, s oracle.Schedule, sel []int) (y, taps []float32, tapCols int, err error)
	// Layouts is true for an attention op: its oracle gives the same rows
	// whatever the engine's layout (chunks, pages).
	Layouts() bool

	// Gather returns a copy of in whose item i is item ids[i] of in (ids
	// are in range).
	Gather(in In, ids []int) In
	// View is Gather for an input nobody writes to: it may share what an
	// item holds alone (a decode request's KV cache) instead of copying it.
	View(in In, ids []int) In
	// First returns the first n items of in, sharing its memory.
	First(in In, n int) In
	// Fill overwrites the input values of items [from, Items) with v(j),
	// j counting each tensor's values of those items (a decode request's
	// V takes v(j+1)); target ids become 0; shared weights stay.
	Fill(in In, from int, v func(j int) float32)
	// Overlay copies the items of src over the first items of dst.
	Overlay(dst, src In)
	// PadFirst is true when a filler item copies the first item's sizes
	// (a decode request's KV length) rather than cycling through the items.
	PadFirst() bool

	// Token is true for an op whose item is one row of one tensor
	// (ItemRows), made by fuzz's token recipe (fuzz/inputs/tokens.go); false
	// for one whose items span several tensors (attention's Q, K and V,
	// fuzz/inputs/attention.go), which pads on the host.
	Token() bool
	// ItemRows is the tensor of a token op's input in holding its items,
	// one row of ItemValues values each (x, logits), which a lazy batch
	// leaves to its targets; nil for an op that is not a token op.
	ItemRows(in In) *[]float32
	// LazyBoundary is true when the op's boundary cases may be lazy: its
	// boundary nudge is one a device runs (gpu/nudge.go).
	LazyBoundary() bool

	// Balance is min(batch size, row size) of c: the largest batch its
	// relation builds (n items) against its reduction length.
	Balance(c spec.Case, n int) int
	// Cost is the CPU work of checking one item of c in fma-equivalents
	// (an Exp32 counts 12, a generated input value 4, an output row 500).
	Cost(c spec.Case) int64
	// SmallScale is how many times casecost.Small a small draw of the op
	// may cost: 8 for a prefill, whose rows cost the square of their
	// length, 1 for the others.
	SmallScale() int64
	// ResidueDraws is how many of every casecost.ResidueEvery small draws
	// a residue case (gen.Residue) follows: 2 for a prefill, which sweeps
	// either its sequences or its length, 1 for the others.
	ResidueDraws() uint64
	// WorkPerFMA weighs the op's work count (spec.OpInfo.FMAs) into the
	// generator's Work (gen.Work), num/den of Work per FMA, measured with
	// the CPU oracle targets.
	WorkPerFMA() (num, den int)

	// FuzzWord is the op's word in the names of its go test -fuzz
	// targets: "Fuzz" + FuzzWord + the relation's word (FuzzRMSNormPadding).
	FuzzWord() string
	// ShapeFields visits s's fields in the bytes for go test -fuzz, in
	// order: the op's shape, before the dtypes and distribution every op
	// has.
	ShapeFields(s *spec.Shape, f Fields)
	// OwnFields visits c's own fields in those bytes, after the dtypes
	// and distribution (an rmsnorm's eps, a decode's KV lengths).
	OwnFields(c *spec.Case, f Fields)

	// Drawer is the op's steps in the case generator.
	Drawer

	// FamilyCols is the row length at which a family of reduction orders
	// around Schedule tells the rows of a case of shape s apart
	// (power.NewFamily): rmsnorm's and gemm's hidden, logprob's vocab,
	// attn_decode's longest KV cache; ok is false for an op with no
	// family (attn_prefill), which has no sensitive draw.
	FamilyCols(s spec.Shape) (cols int, ok bool)

	// ScanDims are the dimensions past items, pad and position
	// (spec.ScanDims) a scan of the op may sweep: attn_decode's kv,
	// neighbour and page, attn_prefill's neighbour, chunk and prefix.
	ScanDims() []string
	// SensitiveWork is the work of an item's sensitive draw of a case of
	// shape s, in single-row evaluations of KV length x head dim (attn_decode:
	// heads x kv x head_dim a request; attn_prefill: summed over a
	// sequence's rows), against which scan bounds its default draw
	// (scan.MaxDefaultAttnWork); 0 for an op whose draw is cheap.
	SensitiveWork(s spec.Shape) int

	// Space is the schedules explain searches for a target of the op
	// whose inputs have dtype in, in canonical order (explain.Space).
	Space(in oracle.DType) []oracle.Schedule
	// ProbeLens is the row lengths at which explain groups the schedules
	// of Space that run the same operations, of the first take items of
	// in: a decode request's KV length each, a prefill's sequence
	// length, gemm's K; none for an op whose schedules need none.
	ProbeLens(in In, take int) []int
	// Spread rewrites the values (dtype dt) of in, a batch of explain's
	// probes, in place with r so that reductions in different orders
	// round differently (explain's probe doc states each op's rule).
	Spread(in In, dt oracle.DType, r *rand.Rand)

	// ModelShapes are the op's inner sizes in a model whose sizes are
	// model (hidden, vocab, heads, kv_heads, head_dim) and whose
	// projections (the GEMMs: hidden is K) are projections, one shape per
	// distinct use; batch dimensions stay zero.
	ModelShapes(model spec.Shape, projections []spec.Shape) []spec.Shape
	// AtModel sets c's inner sizes to inner's, its dtypes to dt (a
	// log-prob: In and a declared Compare; Out stays fp32) and an
	// rmsnorm's eps to eps, keeping its batch dimensions.
	AtModel(c *spec.Case, dt spec.DType, eps float32, inner spec.Shape)
}

// FixedOut reports whether k's outputs have one dtype whatever a case
// declares (OutDType: log-probs are fp32): a case of such an op declares
// the dtype its outputs are compared in (spec.Case.Compare), and a
// profile's dtype does not become its out.
func FixedOut(k CaseOp) bool {
	for _, dt := range []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32} {
		if k.OutDType(dt) != k.OutDType(oracle.BF16) {
			return false
		}
	}
	return true
}

// In is one batch's input of a CaseOp: a pointer to the op's oracle input.
type In = any

// GatherRows returns the rows ids of x, rows of width values each, in that
// order, in a new slice.
func GatherRows(x []float32, ids []int, width int) []float32 {
	out := make([]float32, 0, len(ids)*width)
	for _, id := range ids {
		out = append(out, x[id*width:(id+1)*width]...)
	}
	return out
}

// FillRows sets every value of rows [from, len(x)/width) of x, rows of
// width values each, to v(j), j counting from 0 at row from.
func FillRows(x []float32, from, width int, v func(j int) float32) {
	for j := range x[from*width:] {
		x[from*width+j] = v(j)
	}
}

// ScheduleOf is s as op's schedule type S, for a Reference, which takes
// any oracle.Schedule; an error names op and s's type.
func ScheduleOf[S oracle.Schedule](op spec.Op, s oracle.Schedule) (S, error) {
	sch, ok := s.(S)
	if !ok {
		return sch, fmt.Errorf("oracle %s: schedule %T does not fit the op", op, s)
	}
	return sch, nil
}
