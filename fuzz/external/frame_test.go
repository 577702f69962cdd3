package external

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/oracle"
)

func encodeDoc(t *testing.T, f *frame) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := writeFrame(&buf, f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rawDoc frames a hand-written safetensors header and data.
func rawDoc(header string, data []byte) []byte {
	doc := make([]byte, 16, 16+len(header)+len(data))
	binary.LittleEndian.PutUint64(doc, uint64(8+len(header)+len(data)))
	binary.LittleEndian.PutUint64(doc[8:], uint64(len(header)))
	return append(append(doc, header...), data...)
}

func TestFrameRoundTrip(t *testing.T) {
	xs := []float32{1, -2.5, 0, 3.140625, float32(oracle.MaxFinite(oracle.BF16))}
	f := &frame{meta: map[string]string{"frame": "request", "seq": "7"}, tensors: []tensor{
		{name: "x", dtype: wireBF16, shape: []int{5}, data: encodeFloats(nil, oracle.BF16, xs)},
		{name: "rows", dtype: wireI64, shape: []int{2}, data: encodeInt64s(nil, []int{4, 1})},
		{name: "empty", dtype: wireF32, shape: []int{0, 3}, data: nil},
	}}
	doc := encodeDoc(t, f)
	if h := binary.LittleEndian.Uint64(doc[8:]); (16+h)%8 != 0 {
		t.Fatalf("header of %d bytes leaves the data unaligned", h)
	}
	g, _, err := readFrame(bytes.NewReader(doc), nil, "request frame 7", maxFrame)
	if err != nil {
		t.Fatal(err)
	}
	if g.meta["frame"] != "request" || g.meta["seq"] != "7" {
		t.Fatalf("meta %v", g.meta)
	}
	x, ok := g.tensor("x")
	if !ok || x.dtype != wireBF16 || len(x.shape) != 1 || x.shape[0] != 5 {
		t.Fatalf("x = %+v", x)
	}
	back := make([]float32, 5)
	if err := decodeFloats(back, x); err != nil {
		t.Fatal(err)
	}
	for i := range xs {
		if back[i] != xs[i] {
			t.Fatalf("x[%d] = %v, want %v", i, back[i], xs[i])
		}
	}
	if r, _ := g.tensor("rows"); binary.LittleEndian.Uint64(r.data[8:]) != 1 {
		t.Fatalf("rows = %v", r.data)
	}
}

// TestFrameErrors: a frame that breaks the format gives an error naming the
// frame and the field.
func TestFrameErrors(t *testing.T) {
	four := make([]byte, 4)
	tests := []struct {
		name string
		doc  []byte
		want string
	}{
		{"short length prefix", []byte{1, 2, 3}, "reply frame 3: length prefix: truncated"},
		{"huge length prefix", bytes.Repeat([]byte{0xff}, 64), "reply frame 3: length prefix: 18446744073709551615 bytes is not a frame length"},
		{"truncated body", rawDoc(`{}`, nil)[:12], "reply frame 3: truncated after the length prefix"},
		{"header past the end", func() []byte {
			d := rawDoc(`{}`, nil)
			binary.LittleEndian.PutUint64(d[8:], 1000)
			return d
		}(), "reply frame 3: header length: 1000 bytes does not fit"},
		{"not json", rawDoc(`{nope`, nil), "reply frame 3: header: not a JSON object"},
		{"metadata not strings", rawDoc(`{"__metadata__":{"seq":3}}`, nil), "reply frame 3: __metadata__: want an object of strings"},
		{"unknown dtype", rawDoc(`{"y":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, make([]byte, 8)),
			`reply frame 3: tensor "y": unsupported dtype "F64"`},
		{"shape vs bytes", rawDoc(`{"y":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, four),
			`reply frame 3: tensor "y": shape [2] of F32 needs 8 bytes, data_offsets give 4`},
		{"offsets outside", rawDoc(`{"y":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, four),
			`reply frame 3: tensor "y": data_offsets [0, 8] outside the 4 data bytes`},
		{"hole", rawDoc(`{"y":{"dtype":"BF16","shape":[1],"data_offsets":[2,4]}}`, four),
			`reply frame 3: tensor "y": data_offsets start at 2, want 0`},
		{"trailing bytes", rawDoc(`{"y":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}`, four),
			"reply frame 3: data: 2 bytes after the last tensor"},
		{"negative dim", rawDoc(`{"y":{"dtype":"BF16","shape":[-1],"data_offsets":[0,0]}}`, nil),
			`reply frame 3: tensor "y": bad shape [-1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readFrame(bytes.NewReader(tt.doc), nil, "reply frame 3", maxFrame)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant it to say %q", err, tt.want)
			}
		})
	}
}

// TestFrameEmptyTensorFirst: an empty tensor may sit at the offset where a
// non-empty one starts, listed after it or before it.
func TestFrameEmptyTensorFirst(t *testing.T) {
	for _, doc := range []string{
		`{"y":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"differ":{"dtype":"I64","shape":[0],"data_offsets":[0,0]}}`,
		`{"differ":{"dtype":"I64","shape":[0],"data_offsets":[0,0]},"y":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}`,
		`{"y":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"differ":{"dtype":"I64","shape":[0],"data_offsets":[4,4]}}`,
	} {
		f, _, err := readFrame(bytes.NewReader(rawDoc(doc, make([]byte, 4))), nil, "reply frame 3", maxFrame)
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if d, ok := f.tensor("differ"); !ok || len(d.data) != 0 {
			t.Fatalf("%s: differ %v %v", doc, d, ok)
		}
	}
}
