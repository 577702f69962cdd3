package external

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestLayoutFields: a batch's layout travels as the request fields
// chunk_from and page_size (each only when set) and comes back from
// them (decodeRequest, `bitparity worker`'s side); a bad field is an
// error naming it; a hello's layout must be true or false.
func TestLayoutFields(t *testing.T) {
	p := &oracle.PrefillInput{Q: make([]float32, 2*3*2), K: make([]float32, 2*3*2), V: make([]float32, 2*3*2),
		Seqs: 2, SeqLen: 3, Heads: 1, KVHeads: 1, HeadDim: 2, Out: oracle.BF16}
	for _, l := range []target.Layout{{}, {ChunkFrom: 2}, {PageSize: 5}} {
		b := &target.Batch{Op: spec.OpAttnPrefill, In: oracle.BF16, Out: oracle.BF16, Input: p, Layout: l}
		f, _, err := requestFrame(b, nil, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, chunk := f.meta["chunk_from"]
		_, page := f.meta["page_size"]
		if chunk != (l.ChunkFrom != 0) || page != (l.PageSize != 0) {
			t.Errorf("layout %+v: request fields %v", l, f.meta)
		}
		got, _, err := decodeRequest(f, "request frame 1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Layout != l {
			t.Errorf("layout %+v came back as %+v", l, got.Layout)
		}
	}
	b := &target.Batch{Op: spec.OpAttnPrefill, In: oracle.BF16, Out: oracle.BF16, Input: p}
	f, _, err := requestFrame(b, nil, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.meta["page_size"] = "-4"
	if _, _, err := decodeRequest(f, "request frame 1"); err == nil || !strings.Contains(err.Error(), `field "page_size"`) {
		t.Errorf("page_size -4: error %v", err)
	}
	hello := &frame{meta: map[string]string{"frame": "hello", "protocol": "1", "op": "attn_prefill", "name": "x", "layout": "yes"}}
	if err := checkHello(hello, ""); err == nil || !strings.Contains(err.Error(), `field "layout"`) {
		t.Errorf("layout yes: error %v", err)
	}
	hello.meta["layout"] = "true"
	if err := checkHello(hello, ""); err != nil {
		t.Error(err)
	}
}

// TestServeHelloLayout: `bitparity worker` (Serve) says "layout": "true"
// in its hello for a target that reads the layout (the attention
// oracle; a user kernel whose manifest says so), and nothing for one
// that does not.
func TestServeHelloLayout(t *testing.T) {
	for _, tt := range []struct {
		target string
		want   string
	}{{"oracle-attn_prefill", "true"}, {"oracle-rmsnorm", ""}} {
		tg, err := target.Lookup(tt.target)
		if err != nil {
			t.Fatal(err)
		}
		var in, out bytes.Buffer
		if err := writeFrame(&in, &frame{meta: map[string]string{"frame": "hello", "protocol": "1", "seq": "0"}}); err != nil {
			t.Fatal(err)
		}
		if err := Serve(context.Background(), &in, &out, tg); err != nil {
			t.Fatal(err)
		}
		h, _, err := readFrame(&out, nil, "hello frame 0", 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := h.meta["layout"]; got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: hello layout %q (sent: %v), want %q", tt.target, got, ok, tt.want)
		}
	}
}
