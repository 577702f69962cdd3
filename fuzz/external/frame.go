package external

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// ProtocolVersion is the version of the process protocol (docs/protocol.md)
// this build speaks. The adapter's hello must carry the same number.
const ProtocolVersion = 1

// maxFrame bounds one frame (16 GiB): a length prefix above it is garbage,
// not a reason to allocate.
const maxFrame = 16 << 30

// maxHeader bounds the safetensors JSON header of one frame (100 MB, the
// limit the safetensors reference implementation uses).
const maxHeader = 100 << 20

// replySlack is what a reply may hold beyond its tensors' data: the
// 8-byte length prefixes and the JSON header (64 KiB); helloLimit bounds a
// hello frame, which has no tensors.
const (
	replySlack = 64 << 10
	helloLimit = replySlack
)

// Wire dtype names (safetensors).
const (
	wireBF16 = "BF16"
	wireF16  = "F16"
	wireF32  = "F32"
	wireI32  = "I32"
	wireI64  = "I64"
	wireU8   = "U8" // an op package's uint8 column (fp8 codes)
)

func wireSize(dtype string) int {
	switch dtype {
	case wireU8:
		return 1
	case wireBF16, wireF16:
		return 2
	case wireF32, wireI32:
		return 4
	case wireI64:
		return 8
	}
	return 0
}

// tensor is one named tensor of a frame: its wire dtype, shape and raw
// little-endian bytes.
type tensor struct {
	name  string
	dtype string
	shape []int
	data  []byte
}

// frame is one message: string metadata (safetensors __metadata__) and
// tensors. On the wire a frame is
//
//	u64 little-endian n, then n bytes of a safetensors document:
//	u64 little-endian h, h bytes of JSON header (space-padded to 8), data
//
// where the header maps each tensor name to {dtype, shape, data_offsets}
// and "__metadata__" to the frame's string fields.
type frame struct {
	meta    map[string]string
	tensors []tensor
}

func (f *frame) tensor(name string) (tensor, bool) {
	for _, t := range f.tensors {
		if t.name == name {
			return t, true
		}
	}
	return tensor{}, false
}

type headerEntry struct {
	DType       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// encodeHeader returns the length prefix, the safetensors header length and
// the JSON header, padded with spaces to a multiple of 8 bytes so that the
// data that follows stays aligned.
func (f *frame) encodeHeader() ([]byte, int64, error) {
	h := make(map[string]any, len(f.tensors)+1)
	if len(f.meta) > 0 {
		h["__metadata__"] = f.meta
	}
	var off int64
	for _, t := range f.tensors {
		n := int64(len(t.data))
		h[t.name] = headerEntry{DType: t.dtype, Shape: t.shape, DataOffsets: [2]int64{off, off + n}}
		off += n
	}
	js, err := json.Marshal(h)
	if err != nil {
		return nil, 0, fmt.Errorf("encode header: %w", err)
	}
	if pad := (8 - (16+len(js))%8) % 8; pad > 0 {
		js = append(js, strings.Repeat(" ", pad)...)
	}
	buf := make([]byte, 16+len(js))
	binary.LittleEndian.PutUint64(buf[0:], uint64(8+len(js))+uint64(off))
	binary.LittleEndian.PutUint64(buf[8:], uint64(len(js)))
	copy(buf[16:], js)
	return buf, off, nil
}

// writeFrame writes f to w: the header, then each tensor's bytes in order,
// without copying them into one buffer.
func writeFrame(w io.Writer, f *frame) error {
	head, _, err := f.encodeHeader()
	if err != nil {
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	for _, t := range f.tensors {
		if _, err := w.Write(t.data); err != nil {
			return err
		}
	}
	return nil
}

// frameError is a protocol error: it names the frame (its kind and number)
// and the field.
type frameError struct {
	frame string // e.g. "reply frame 3"
	field string // e.g. `tensor "y"`; may be empty
	msg   string
}

// frameErrorf is the constructor of frame name's frameErrors: the field
// (may be empty) and the message, formatted.
func frameErrorf(name string) func(field, format string, a ...any) error {
	return func(field, format string, a ...any) error {
		return &frameError{frame: name, field: field, msg: fmt.Sprintf(format, a...)}
	}
}

// checkReply checks that rep (frame name) is the reply to request seq: its
// "frame" field says "reply" and its "seq" is the request's.
func checkReply(rep *frame, seq int, name string) error {
	bad := frameErrorf(name)
	if k := rep.meta["frame"]; k != "reply" {
		return bad(`field "frame"`, "%q, want \"reply\"", k)
	}
	if s := rep.meta["seq"]; s != strconv.Itoa(seq) {
		return bad(`field "seq"`, "%q, want %d (the request's)", s, seq)
	}
	return nil
}

func (e *frameError) Error() string {
	if e.field == "" {
		return e.frame + ": " + e.msg
	}
	return e.frame + ": " + e.field + ": " + e.msg
}

// readFrame reads one frame of at most limit bytes (and never more than
// maxFrame) from r into buf (grown when needed, returned for reuse): a
// length prefix over the limit is refused before anything is allocated.
// name says which frame is expected ("reply frame 3") for error messages.
// Tensor data aliases the returned buffer.
func readFrame(r io.Reader, buf []byte, name string, limit uint64) (*frame, []byte, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return nil, buf, &frameError{frame: name, field: "length prefix", msg: "truncated"}
		}
		return nil, buf, fmt.Errorf("%s: %w", name, err)
	}
	n := binary.LittleEndian.Uint64(pre[:])
	if n < 8 || n > maxFrame {
		return nil, buf, &frameError{frame: name, field: "length prefix", msg: fmt.Sprintf("%d bytes is not a frame length (want 8..%d)", n, uint64(maxFrame))}
	}
	if n > limit {
		return nil, buf, &frameError{frame: name, field: "length prefix", msg: fmt.Sprintf("%d bytes announced, over the %d this request can produce (its outputs and taps plus a %d-byte header)", n, limit, replySlack)}
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, buf, &frameError{frame: name, msg: fmt.Sprintf("truncated after the length prefix (%d bytes announced): %v", n, err)}
	}
	f, err := parseSafetensors(buf, name)
	return f, buf, err
}

// parseSafetensors decodes one safetensors document and checks it: a
// header length inside the document, JSON, known dtypes, shapes that match
// their byte ranges, ranges that tile the data exactly.
func parseSafetensors(doc []byte, name string) (*frame, error) {
	bad := frameErrorf(name)
	h := binary.LittleEndian.Uint64(doc[:8])
	if h > maxHeader || h > uint64(len(doc)-8) {
		return nil, bad("header length", "%d bytes does not fit a %d-byte frame", h, len(doc))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(doc[8:8+h], &raw); err != nil {
		return nil, bad("header", "not a JSON object: %v", err)
	}
	data := doc[8+h:]
	f := &frame{meta: map[string]string{}}
	if m, ok := raw["__metadata__"]; ok {
		if err := json.Unmarshal(m, &f.meta); err != nil {
			return nil, bad("__metadata__", "want an object of strings: %v", err)
		}
		delete(raw, "__metadata__")
	}
	type span struct {
		lo, hi int64
		name   string
	}
	var spans []span
	for tn, msg := range raw {
		field := fmt.Sprintf("tensor %q", tn)
		var e headerEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, bad(field, "bad header entry: %v", err)
		}
		size := wireSize(e.DType)
		if size == 0 {
			return nil, bad(field, "unsupported dtype %q (want BF16, F16, F32, I32, I64 or U8)", e.DType)
		}
		elems := int64(1)
		for _, d := range e.Shape {
			if d < 0 || (d > 0 && elems > maxFrame/int64(d)) {
				return nil, bad(field, "bad shape %v", e.Shape)
			}
			elems *= int64(d)
		}
		lo, hi := e.DataOffsets[0], e.DataOffsets[1]
		if lo < 0 || hi < lo || hi > int64(len(data)) {
			return nil, bad(field, "data_offsets [%d, %d] outside the %d data bytes", lo, hi, len(data))
		}
		if hi-lo != elems*int64(size) {
			return nil, bad(field, "shape %v of %s needs %d bytes, data_offsets give %d", e.Shape, e.DType, elems*int64(size), hi-lo)
		}
		f.tensors = append(f.tensors, tensor{name: tn, dtype: e.DType, shape: e.Shape, data: data[lo:hi]})
		spans = append(spans, span{lo, hi, tn})
	}
	// by start, then end: an empty tensor sits before the tensor that
	// starts where it does, wherever the writer put it
	sort.Slice(spans, func(i, j int) bool {
		return spans[i].lo < spans[j].lo || spans[i].lo == spans[j].lo && spans[i].hi < spans[j].hi
	})
	var at int64
	for _, s := range spans {
		if s.lo != at {
			return nil, bad(fmt.Sprintf("tensor %q", s.name), "data_offsets start at %d, want %d (tensors must tile the data without holes or overlap)", s.lo, at)
		}
		at = s.hi
	}
	if at != int64(len(data)) {
		return nil, bad("data", "%d bytes after the last tensor", int64(len(data))-at)
	}
	sort.Slice(f.tensors, func(i, j int) bool { return f.tensors[i].name < f.tensors[j].name })
	return f, nil
}
