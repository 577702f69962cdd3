// Package quantfp8 is the op quant_fp8: dynamic scaling of a row of
// hidden values (bf16 or fp32) to FP8 (E4M3 or E5M2). A row (one token)
// gives its hidden fp8 codes (uint8) and its scale (fp32).
//
// The reference (Quantize), with correctly rounded fp32 operations:
//
//	amax   = max |x| over the row (per_token) or over every row of the
//	         batch, rows in order (per_tensor); NaN values are skipped
//	scale  = amax / fmax   (oracle.Div32; fmax = 448 for e4m3, 57344 for
//	         e5m2); scale = 1 when amax = 0
//	q[i]   = Encode(x[i] / scale)   (oracle.Div32, then fp8 round to
//	         nearest even with saturation: Encode)
//
// Every row's output holds its scale, so per_tensor repeats the batch's.
// With per_tensor scaling a row's bits depend on the other rows' values
// (their amax), not only on the batch size; per_token scaling does not.
package quantfp8

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Name is the op's name.
const Name = "quant_fp8"

// DimHidden is the row width.
const DimHidden = "hidden"

// MaxHidden bounds a row's width.
const MaxHidden = 1 << 20

// Output columns.
const (
	ColQ     = 0 // q: hidden uint8 fp8 codes
	ColScale = 1 // scale: one fp32
)

// TensorX is the tensor id of the input rows in the seeded generator.
const TensorX uint64 = 0x667038 // "fp8"

// Scaling says which values one scale covers.
type Scaling uint8

const (
	PerToken  Scaling = iota // one scale per row
	PerTensor                // one scale per batch
)

// Policy is a quantizer's scaling and format; the zero value is per_token
// e4m3.
type Policy struct {
	Scaling Scaling
	Format  Format
}

func (p Policy) String() string {
	s := "per_token"
	if p.Scaling == PerTensor {
		s = "per_tensor"
	}
	return "scaling=" + s + " format=" + p.Format.String()
}

// ParsePolicy parses Policy.String's form; "" is the zero policy.
func ParsePolicy(s string) (Policy, error) {
	var p Policy
	for _, f := range strings.Fields(s) {
		k, v, _ := strings.Cut(f, "=")
		var err error
		switch {
		case k == "scaling" && v == "per_token":
			p.Scaling = PerToken
		case k == "scaling" && v == "per_tensor":
			p.Scaling = PerTensor
		case k == "format":
			p.Format, err = ParseFormat(v)
		default:
			err = fmt.Errorf("unknown %q (want scaling=per_token|per_tensor format=e4m3|e5m2)", f)
		}
		if err != nil {
			return Policy{}, fmt.Errorf("quant_fp8 policy %q: %w", s, err)
		}
	}
	return p, nil
}

// Amax is max |x| over xs (NaN skipped), starting from a.
func Amax(a float32, xs []float32) float32 {
	for _, v := range xs {
		if v == v {
			a = oracle.Max32(a, float32(math.Abs(float64(v))))
		}
	}
	return a
}

// Scale is amax / fmax, or 1 when amax is 0.
func Scale(f Format, amax float32) float32 {
	if amax == 0 {
		return 1
	}
	return oracle.Div32(amax, f.Max())
}

// Quantize writes the fp8 codes of row x at scale into q.
func Quantize(f Format, x []float32, scale float32, q []uint8) {
	for i, v := range x {
		q[i] = Encode(f, oracle.Div32(v, scale))
	}
}

// Op is the op quant_fp8.
type Op struct{}

var _ ops.Op = Op{}

// Record: a row is a token of hidden values (default 2048, Qwen3-30B-A3B's
// width), fp32 (the default) or bf16.
func (Op) Record() ops.Record {
	return ops.Record{
		Name: Name, Item: "token",
		Dims:  []ops.Dim{{Name: DimHidden, Default: 2048}},
		In:    []oracle.DType{oracle.FP32, oracle.BF16},
		Dists: []string{string(spec.DistNormal), string(spec.DistOutlier), string(spec.DistHeavy)},
	}
}

func hidden(s ops.Shape) (int, error) {
	h := s[DimHidden]
	if h < 1 || h > MaxHidden {
		return 0, fmt.Errorf("quant_fp8: hidden = %d, want 1..%d", h, MaxHidden)
	}
	return h, nil
}

func checkIn(dt oracle.DType) error {
	if dt != oracle.FP32 && dt != oracle.BF16 {
		return fmt.Errorf("quant_fp8: input of dtype %s, want fp32 or bf16", dt)
	}
	return nil
}

// Columns are q (hidden uint8) and scale (one fp32).
func (Op) Columns(s ops.Shape) ([]ops.Column, error) {
	h, err := hidden(s)
	if err != nil {
		return nil, err
	}
	return columns(h), nil
}

func columns(h int) []ops.Column {
	return []ops.Column{{Name: "q", Elem: ops.Uint8, Width: h}, {Name: "scale", Elem: ops.FP32, Width: 1}}
}

// Work counts a row's operations: amax, divide and encode per value.
func (Op) Work(s ops.Shape) int64 { return 3 * int64(s[DimHidden]) }

// Seeded returns values' rows of tensor TensorX for keys.
func (Op) Seeded(d ops.Draw, keys []uint64) (ops.Input, error) {
	h, err := hidden(d.Shape)
	if err != nil {
		return nil, err
	}
	if err := checkIn(d.DType); err != nil {
		return nil, err
	}
	b, err := ops.SeededRows(d, TensorX, h, keys)
	if err != nil {
		return nil, fmt.Errorf("quant_fp8: %w", err)
	}
	return b, nil
}

// Explicit returns rows of hidden values, each a value of dt.
func (Op) Explicit(s ops.Shape, dt oracle.DType, values []float32) (ops.Input, error) {
	h, err := hidden(s)
	if err != nil {
		return nil, err
	}
	if err := checkIn(dt); err != nil {
		return nil, err
	}
	return ops.ExplicitRows(s, dt, h, values)
}

// Reference quantizes every row of in with policy (ParsePolicy's form).
func (Op) Reference(in ops.Input, policy string) (*ops.Output, error) {
	p, err := ParsePolicy(policy)
	if err != nil {
		return nil, err
	}
	return run(in, p)
}

// run quantizes every row of in with p.
func run(in ops.Input, p Policy) (*ops.Output, error) {
	b, ok := in.(*ops.Rows)
	if !ok {
		return nil, fmt.Errorf("quant_fp8: a batch of %T, want rows (*ops.Rows)", in)
	}
	h, err := hidden(b.Shape)
	if err != nil {
		return nil, err
	}
	o := ops.NewOutput(columns(h), b.Items())
	var tensor float32
	if p.Scaling == PerTensor {
		tensor = Scale(p.Format, Amax(0, b.Values))
	}
	for r := range b.Items() {
		s := tensor
		if p.Scaling == PerToken {
			s = Scale(p.Format, Amax(0, b.Row(r)))
		}
		Quantize(p.Format, b.Row(r), s, o.Row(ColQ, r))
		o.PutFP32(ColScale, r, 0, s)
	}
	return o, nil
}

// target is a CPU quantizer of one policy.
type target struct {
	name string
	p    Policy
}

func (t *target) Name() string     { return t.name }
func (t *target) Op() ops.Op       { return Op{} }
func (t *target) Declared() string { return t.p.String() }
func (t *target) Invariant() bool  { return t.p.Scaling == PerToken }
func (t *target) Models() string {
	if t.p.Scaling == PerTensor {
		return fmt.Sprintf("dynamic per-tensor %s scaling: one scale from the batch's amax, so a row depends on other rows' values", t.p.Format)
	}
	return fmt.Sprintf("dynamic per-token %s scaling: each row's scale from its own amax (row-independent)", t.p.Format)
}
func (t *target) Run(ctx context.Context, in ops.Input) (*ops.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return run(in, t.p)
}

// Targets are the four quantizers: per-token (invariant) and per-tensor
// (a row depends on other rows' values), each in e4m3 and e5m2.
func (Op) Targets() []ops.Target {
	return []ops.Target{
		&target{"quant-fp8-per-token", Policy{PerToken, E4M3}},
		&target{"quant-fp8-per-tensor", Policy{PerTensor, E4M3}},
		&target{"quant-fp8-per-token-e5m2", Policy{PerToken, E5M2}},
		&target{"quant-fp8-per-tensor-e5m2", Policy{PerTensor, E5M2}},
	}
}

// Words says how many tokens' scales and codes differ, and that a changed
// scale means the row depended on other rows' values:
//
//	"64 of 64 tokens differ: 64 with another scale (their bits depend on
//	other rows' values: the batch's amax), first: token 0: scale
//	0x3b0b4f3d -> 0x3b2a1c00, 1803 of 2048 codes differ"
func (Op) Words(in ops.Input, want, got *ops.Output, rows []int) string {
	if len(rows) == 0 {
		return "no token differs"
	}
	scaled := 0
	for _, r := range rows {
		if !bytes.Equal(want.Row(ColScale, r), got.Row(ColScale, r)) {
			scaled++
		}
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%d of %d tokens differ", len(rows), want.Rows)
	if scaled > 0 {
		fmt.Fprintf(&s, ": %d with another scale (their bits depend on other rows' values: the batch's amax)", scaled)
	}
	r := rows[0]
	codes := 0
	w, g := want.Row(ColQ, r), got.Row(ColQ, r)
	for i := range w {
		if w[i] != g[i] {
			codes++
		}
	}
	fmt.Fprintf(&s, "; first: token %d: scale %#08x -> %#08x, %d of %d codes differ", r,
		math.Float32bits(want.FP32(ColScale, r, 0)), math.Float32bits(got.FP32(ColScale, r, 0)), codes, len(w))
	return s.String()
}
