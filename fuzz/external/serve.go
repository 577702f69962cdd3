package external

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Serve is the adapter side of the process protocol in Go: it answers the
// harness's hello with t's Info, then reads requests from r, runs t on each
// batch and writes the replies to w, until r ends (it returns nil then).
// `bitparity worker` uses it to run a GPU or user-kernel target in a
// subprocess, so a fault or a hang kills the worker, not the campaign.
//
// A Run error wrapping ErrUnsupported or target.ErrUnsupported (a dtype the
// kernel does not take) is answered with an error frame
// of kind "unsupported"; one wrapping target.ErrTargetCrashed makes Serve
// return it (the worker then exits, and the harness restarts it: a GPU
// context after a fault is unusable); any other error is answered with an
// error frame of kind "failure".
func Serve(ctx context.Context, r io.Reader, w io.Writer, t target.Target) error {
	info := t.Info()
	var buf []byte
	hello, buf, err := readFrame(r, buf, "hello frame 0", maxFrame)
	if err != nil {
		return err
	}
	if hello.meta["frame"] != "hello" {
		return fmt.Errorf("hello frame 0: frame %q, want hello", hello.meta["frame"])
	}
	if op := hello.meta["op"]; op != "" && spec.Op(op) != info.Op {
		return writeFrame(w, &frame{meta: map[string]string{"frame": "error", "seq": "0", "kind": "unsupported",
			"message": fmt.Sprintf("target %s runs %s, not %s", info.Name, info.Op, op)}})
	}
	meta := map[string]string{
		"frame": "hello", "protocol": strconv.Itoa(ProtocolVersion), "seq": "0",
		"op": string(info.Op), "name": info.Name, "device": info.Device,
		"invariant": strconv.FormatBool(info.Invariant), "schedule": info.Schedule,
		"about": info.Models,
	}
	if info.Schedule == "" {
		meta["ulp_bound"] = strconv.FormatUint(info.ULPBound, 10)
	}
	if info.Layouts {
		meta["layout"] = "true"
	}
	if err := writeFrame(w, &frame{meta: meta}); err != nil {
		return fmt.Errorf("write hello: %w", err)
	}
	var scratch []byte
	for seq := 1; ; seq++ {
		name := fmt.Sprintf("request frame %d", seq)
		req, nbuf, err := readFrame(r, buf, name, maxFrame)
		buf = nbuf
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		sseq := req.meta["seq"]
		b, rows, err := decodeRequest(req, name)
		if err != nil {
			return err
		}
		out, err := t.Run(ctx, b, rows)
		if err == nil {
			err = hostValues(out)
		}
		if err != nil {
			switch {
			case errors.Is(err, target.ErrTargetCrashed):
				return fmt.Errorf("%s: %w", name, err)
			case errors.Is(err, ErrUnsupported), errors.Is(err, target.ErrUnsupported):
				err = writeFrame(w, &frame{meta: map[string]string{"frame": "error", "seq": sseq, "kind": "unsupported", "message": err.Error()}})
			default:
				err = writeFrame(w, &frame{meta: map[string]string{"frame": "error", "seq": sseq, "kind": "failure", "message": err.Error()}})
			}
			if err != nil {
				return fmt.Errorf("write error frame %d: %w", seq, err)
			}
			continue
		}
		scratch = encodeFloats(scratch[:0], out.DType, out.Values)
		rep := &frame{meta: map[string]string{"frame": "reply", "seq": sseq}}
		rep.tensors = append(rep.tensors, tensor{name: "y", dtype: wireDType(out.DType), shape: []int{len(out.Rows), out.Cols}, data: scratch})
		if out.TapCols > 0 && len(out.Taps) == len(out.Rows)*out.TapCols {
			taps := encodeFloats(nil, oracle.FP32, out.Taps)
			rep.tensors = append(rep.tensors, tensor{name: "taps", dtype: wireF32, shape: []int{len(out.Rows), out.TapCols}, data: taps})
		}
		if err := writeFrame(w, rep); err != nil {
			return fmt.Errorf("write reply frame %d: %w", seq, err)
		}
	}
}

// hostValues fetches a device output's rows to the host and releases it.
func hostValues(o *target.Output) error {
	err := o.ToHost()
	o.Release()
	o.Device, o.DeviceTaps = nil, nil
	if err != nil {
		return fmt.Errorf("fetch the output: %w: %w", target.ErrTargetCrashed, err)
	}
	return nil
}

// decodeRequest is the inverse of requestFrame: the batch and the selected
// rows (nil: all) of a request frame.
func decodeRequest(f *frame, name string) (*target.Batch, []int, error) {
	bad := frameErrorf(name)
	if f.meta["frame"] != "request" {
		return nil, nil, bad(`field "frame"`, "%q, want \"request\"", f.meta["frame"])
	}
	dtype := func(field string) (oracle.DType, error) {
		switch f.meta[field] {
		case "bf16":
			return oracle.BF16, nil
		case "fp16":
			return oracle.FP16, nil
		case "fp32":
			return oracle.FP32, nil
		}
		return 0, bad(fmt.Sprintf("field %q", field), "unknown dtype %q", f.meta[field])
	}
	in, err := dtype("in")
	if err != nil {
		return nil, nil, err
	}
	out, err := dtype("out")
	if err != nil {
		return nil, nil, err
	}
	b := &target.Batch{Op: spec.Op(f.meta["op"]), In: in, Out: out}
	k, ok := all.Case(b.Op)
	if !ok {
		return nil, nil, bad(`field "op"`, "unknown op %q", b.Op)
	}
	x, err := k.FromWire(requestWire{f, bad}, out)
	if err != nil {
		return nil, nil, err
	}
	b = b.With(x)
	for field, dst := range map[string]*int{"chunk_from": &b.Layout.ChunkFrom, "page_size": &b.Layout.PageSize} {
		if v, ok := f.meta[field]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, nil, bad(fmt.Sprintf("field %q", field), "%q, want a decimal >= 0", truncate(v))
			}
			*dst = n
		}
	}
	var rows []int
	if _, ok := f.tensor("rows"); ok {
		rs, err := (requestWire{f, bad}).Ints("rows")
		if err != nil {
			return nil, nil, err
		}
		rows = make([]int, len(rs))
		for i, r := range rs {
			rows[i] = int(r)
		}
	}
	return b, rows, nil
}

// requestWire reads a request frame's tensors for an op's FromWire
// (ops.Wire); bad makes its errors.
type requestWire struct {
	f   *frame
	bad func(field, format string, a ...any) error
}

func (w requestWire) Floats(name string, dims int) ([]float32, []int, error) {
	t, ok := w.f.tensor(name)
	if !ok {
		return nil, nil, w.bad(fmt.Sprintf("tensor %q", name), "missing")
	}
	if len(t.shape) != dims {
		return nil, nil, w.bad(fmt.Sprintf("tensor %q", name), "shape %v, want %d dimensions", t.shape, dims)
	}
	v := make([]float32, len(t.data)/max(1, wireSize(t.dtype)))
	if err := decodeFloats(v, t); err != nil {
		return nil, nil, w.bad(fmt.Sprintf("tensor %q", name), "%v", err)
	}
	return v, t.shape, nil
}

func (w requestWire) Ints(name string) ([]int64, error) {
	t, ok := w.f.tensor(name)
	if !ok {
		return nil, w.bad(fmt.Sprintf("tensor %q", name), "missing")
	}
	return decodeInts(t)
}

func (w requestWire) Eps() (float32, error) {
	eps, err := strconv.ParseUint(w.f.meta["eps_bits"], 16, 32)
	if err != nil {
		return 0, w.bad(`field "eps_bits"`, "%v", err)
	}
	return math.Float32frombits(uint32(eps)), nil
}

func (w requestWire) Bad(field, format string, a ...any) error { return w.bad(field, format, a...) }

// decodeInts reads an I32 or I64 tensor.
func decodeInts(t tensor) ([]int64, error) {
	switch t.dtype {
	case wireI32:
		out := make([]int64, len(t.data)/4)
		for i := range out {
			out[i] = int64(int32(binary.LittleEndian.Uint32(t.data[4*i:])))
		}
		return out, nil
	case wireI64:
		out := make([]int64, len(t.data)/8)
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(t.data[8*i:]))
		}
		return out, nil
	}
	return nil, fmt.Errorf("tensor %q: dtype %s, want I32 or I64", t.name, t.dtype)
}
