package external

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
)

// OpTarget is an adapter of an op package's op (moe_route, moe_router,
// quant_fp8: ops/all.Ops) as an ops.Target: Run sends the batch as a
// request frame (ops.WireOp.Wire) and reads the op's output columns from
// the reply, so every relation, scan, map and word of the op applies to
// it as to the op's CPU targets (docs/protocol.md, "Ops of the op
// packages"). It shares the process, its restarts and its errors with
// the Target it wraps.
type OpTarget struct {
	t    *Target
	op   ops.WireOp
	held *opHeld // the batch the adapter holds for a scan (opscan.go); t.mu guards it
}

var _ ops.Target = (*OpTarget)(nil)

// wireOp is the op package's op called name when the protocol carries it.
func wireOp(name spec.Op) (ops.WireOp, bool) {
	op, err := all.Op(string(name))
	if err != nil {
		return nil, false
	}
	w, ok := op.(ops.WireOp)
	return w, ok
}

// Name is the target's name: exec:NAME from the hello, or Options.Name.
func (o *OpTarget) Name() string { return o.t.info.Name }

// Op is the op the adapter's hello names.
func (o *OpTarget) Op() ops.Op { return o.op }

// Declared is the hello's schedule: a policy in the op's form ("" is the
// op's default).
func (o *OpTarget) Declared() string { return o.t.info.Schedule }

// Models says which process it is and what the adapter says of itself.
func (o *OpTarget) Models() string { return o.t.info.Models }

// Invariant is the hello's invariant.
func (o *OpTarget) Invariant() bool { return o.t.info.Invariant }

// Process is the adapter process behind the target (its hello, Close).
func (o *OpTarget) Process() *Target { return o.t }

// Run sends in to the adapter and returns every row of its reply. Errors
// are Target.Run's: a crash, hang or bad reply wraps
// target.ErrTargetCrashed and names the frame and field.
func (o *OpTarget) Run(ctx context.Context, in ops.Input) (*ops.Output, error) {
	b, err := o.op.Wire(in)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", o.Name(), err)
	}
	cols, err := o.op.Columns(b.Shape)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", o.Name(), err)
	}
	var out *ops.Output
	err = o.t.roundTrip(ctx, opReplyLimit(cols, b.Items), func(seq int) (*frame, error) {
		req, scratch, err := opRequestFrame(o.op.Record().Name, b, seq, o.t.scratch[:0])
		o.t.scratch = scratch
		return req, err
	}, func(rep *frame, seq int, name string) (err error) {
		out, err = decodeOpReply(rep, cols, b.Items, seq, name)
		return err
	})
	return out, err
}

// opRequestFrame is the request frame of batch b of op: fields frame,
// seq, op, in and one decimal field per dimension of b.Shape, and b's
// tensors, floats in b.DType.
func opRequestFrame(op string, b ops.WireBatch, seq int, scratch []byte) (*frame, []byte, error) {
	meta := map[string]string{"frame": "request", "seq": strconv.Itoa(seq), "op": op, "in": b.DType.String()}
	for k, v := range b.Shape {
		if _, taken := meta[k]; taken {
			return nil, scratch, fmt.Errorf("request: op %s has a dimension named %q, a field of every request", op, k)
		}
		meta[k] = strconv.Itoa(v)
	}
	f, scratch := tensorFrame(meta, b.Tensors, b.DType, nil, scratch)
	return f, scratch, nil
}

// elemWire is the wire dtype of an output column's elements.
func elemWire(e ops.Elem) string {
	switch e {
	case ops.Int32:
		return wireI32
	case ops.Uint8:
		return wireU8
	}
	return wireF32
}

// opReplyLimit bounds the reply to a batch of items rows of cols.
func opReplyLimit(cols []ops.Column, items int) uint64 {
	n := uint64(replySlack)
	for _, c := range cols {
		n += uint64(items) * uint64(c.Width) * uint64(c.Elem.Size())
	}
	return n
}

// decodeOpReply checks a reply to an op package's request and returns its
// rows: frame "reply", the request's seq, and for each column a tensor
// of the column's name, element type and shape [items, width], whose
// bytes are the column's as sent.
func decodeOpReply(rep *frame, cols []ops.Column, items, seq int, name string) (*ops.Output, error) {
	bad := frameErrorf(name)
	if err := checkReply(rep, seq, name); err != nil {
		return nil, err
	}
	out := ops.NewOutput(cols, items)
	for c, col := range cols {
		field := fmt.Sprintf("tensor %q", col.Name)
		t, ok := rep.tensor(col.Name)
		if !ok {
			return nil, bad(field, "missing (the column %s: %d %s a row)", col.Name, col.Width, col.Elem)
		}
		if want := elemWire(col.Elem); t.dtype != want {
			return nil, bad(field, "dtype %s expected (%s), got %s", want, col.Elem, t.dtype)
		}
		if !slices.Equal(t.shape, []int{items, col.Width}) {
			return nil, bad(field, "shape [%d %d] expected (%d rows of %d), got %v", items, col.Width, items, col.Width, t.shape)
		}
		copy(out.Data[c], t.data)
	}
	return out, nil
}
