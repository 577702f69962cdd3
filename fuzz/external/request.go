package external

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// requestFrame builds the request frame of batch b (docs/protocol.md,
// "request"): metadata op, in, out, eps, eps_bits, seq and the op's
// tensors (ops.CaseOp.WireTensors), floats in the input dtype, plus
// "rows" (I64) when rows is not nil.
// Tensor bytes are written into scratch (grown when short, returned for
// reuse).
func requestFrame(b *target.Batch, rows []int, seq int, scratch []byte) (*frame, []byte, error) {
	k, x, err := b.Kind()
	if err != nil {
		return nil, scratch, fmt.Errorf("request: %w", err)
	}
	eps, ts, err := k.WireTensors(x)
	if err != nil {
		return nil, scratch, err
	}
	meta := map[string]string{
		"frame":    "request",
		"seq":      strconv.Itoa(seq),
		"op":       string(b.Op),
		"in":       b.In.String(),
		"out":      b.OutDType().String(),
		"eps":      strconv.FormatFloat(float64(eps), 'g', -1, 32),
		"eps_bits": fmt.Sprintf("%08x", math.Float32bits(eps)),
	}
	layoutFields(meta, b.Layout)
	f, scratch := tensorFrame(meta, ts, b.In, rows, scratch)
	return f, scratch, nil
}

// tensorFrame is the frame of metadata meta and tensors ts (docs/protocol.md,
// "request"): float tensors in dtype in, I32 tensors as they are, then
// "rows" (I64) when rows is not nil. Tensor bytes are written into scratch
// (grown when short, returned for reuse).
func tensorFrame(meta map[string]string, ts []ops.WireTensor, in oracle.DType, rows []int, scratch []byte) (*frame, []byte) {
	type spec_ struct {
		name  string
		dtype string
		shape []int
		enc   func([]byte) []byte
	}
	specs := make([]spec_, 0, len(ts)+1)
	for _, t := range ts {
		if t.Int {
			specs = append(specs, spec_{t.Name, wireI32, t.Shape, func(d []byte) []byte { return encodeInt32s(d, t.Ints) }})
			continue
		}
		specs = append(specs, spec_{t.Name, wireDType(in), t.Shape, func(d []byte) []byte {
			for _, p := range t.Floats {
				d = encodeFloats(d, in, p)
			}
			return d
		}})
	}
	if rows != nil {
		specs = append(specs, spec_{"rows", wireI64, []int{len(rows)}, func(d []byte) []byte { return encodeInt64s(d, rows) }})
	}
	size := 0
	for _, s := range specs {
		n := wireSize(s.dtype)
		for _, d := range s.shape {
			n *= d
		}
		size += n
	}
	if cap(scratch) < size {
		scratch = make([]byte, 0, size)
	}
	scratch = scratch[:0]
	f := &frame{meta: meta}
	for _, s := range specs {
		lo := len(scratch)
		scratch = s.enc(scratch)
		f.tensors = append(f.tensors, tensor{name: s.name, dtype: s.dtype, shape: s.shape, data: scratch[lo:len(scratch):len(scratch)]})
	}
	return f, scratch
}

// layoutFields sets the request fields of an engine's layout (an
// adapter that reads them says "layout": "true" in its hello; the harness
// sends a layout to no other): chunk_from (attn_prefill: the chunk's
// queries are those at positions >= chunk_from) and page_size
// (attn_decode: the tokens a page of the paged cache), each only when
// set. A batch without a layout has neither: whole prompts, the
// adapter's own page size.
func layoutFields(meta map[string]string, l target.Layout) {
	if l.ChunkFrom != 0 {
		meta["chunk_from"] = strconv.Itoa(l.ChunkFrom)
	}
	if l.PageSize != 0 {
		meta["page_size"] = strconv.Itoa(l.PageSize)
	}
}

// replyLimit bounds the reply to a request for rows of b (all when rows is
// nil): y of the output dtype and fp32 taps of up to cols+8 per row (no op
// has more: RMSNorm and log-prob have 2, attention one per output column),
// plus replySlack.
func replyLimit(b *target.Batch, rows []int) uint64 {
	n := uint64(len(rows))
	if rows == nil {
		n = uint64(b.Rows())
	}
	cols := uint64(b.Cols())
	return replySlack + n*cols*uint64(wireSize(wireDType(b.OutDType()))) + n*(cols+8)*4
}

// decodeReply checks a reply frame against its request and returns the
// output: frame "reply", the same seq, tensor "y" of the output dtype and
// shape [selected rows, cols], optional "taps" F32 [selected rows, k].
func decodeReply(rep *frame, b *target.Batch, rows []int, seq int, name string) (*target.Output, error) {
	bad := frameErrorf(name)
	if err := checkReply(rep, seq, name); err != nil {
		return nil, err
	}
	sel := slices.Clone(b.Rows0(rows))
	cols := b.Cols()
	dt := b.OutDType()
	y, ok := rep.tensor("y")
	if !ok {
		return nil, bad(`tensor "y"`, "missing")
	}
	if want := wireDType(dt); y.dtype != want {
		return nil, bad(`tensor "y"`, "dtype %s expected, got %s", want, y.dtype)
	}
	if !slices.Equal(y.shape, []int{len(sel), cols}) {
		return nil, bad(`tensor "y"`, "shape [%d %d] expected, got %v", len(sel), cols, y.shape)
	}
	out := &target.Output{Rows: sel, Cols: cols, DType: dt, Values: make([]float32, len(sel)*cols)}
	if err := decodeFloats(out.Values, y); err != nil {
		return nil, bad(`tensor "y"`, "%v", err)
	}
	if tp, ok := rep.tensor("taps"); ok {
		if tp.dtype != wireF32 || len(tp.shape) != 2 || tp.shape[0] != len(sel) {
			return nil, bad(`tensor "taps"`, "F32 [%d k] expected, got %s %v", len(sel), tp.dtype, tp.shape)
		}
		out.Taps, out.TapCols = decodeFloat32s(tp), tp.shape[1]
	}
	return out, nil
}
