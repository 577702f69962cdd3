package external

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// bigBatch is the seed's batch: RMSNorm, 2274 rows x 4096, bf16 in and out.
func bigBatch(b *testing.B) *target.Batch {
	c := testCase(spec.OpRMSNorm, spec.BF16, spec.BF16, spec.DistNormal, 1)
	c.Shape = spec.Shape{Rows: 2274, Hidden: 4096}
	bt, err := inputs.Of(c)
	if err != nil {
		b.Fatal(err)
	}
	return bt
}

func benchTarget(b *testing.B, cmdline string) {
	tg, err := New(cmdline, spec.OpRMSNorm, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	bt := bigBatch(b)
	ctx := context.Background()
	if _, err := tg.Run(ctx, bt, nil); err != nil { // warm up
		b.Fatal(err)
	}
	b.SetBytes(int64(2 * 2 * 2274 * 4096)) // x out, y back
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tg.Run(ctx, bt, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTransportEcho is the harness's whole overhead per batch at
// 2274 x 4096 bf16: encode, pipe to the adapter, Python reads the frame,
// echoes x back as y without touching it, the harness decodes.
func BenchmarkTransportEcho(b *testing.B) {
	benchTarget(b, adapterCmd(b, "fuzz/external/testdata/echo.py"))
}

// BenchmarkNumpyRMSNorm is the NumPy adapter's exact RMSNorm on the same
// batch, transport included.
func BenchmarkNumpyRMSNorm(b *testing.B) {
	benchTarget(b, adapterCmd(b, "adapters/numpy_ops.py", "rmsnorm"))
}

// BenchmarkEncodeRequest is the Go side of a request alone: bf16 encoding
// and framing of 2274 x 4096 values into a discarded writer.
func BenchmarkEncodeRequest(b *testing.B) {
	bt := bigBatch(b)
	var scratch []byte
	b.SetBytes(int64(2 * 2274 * 4096))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, s, err := requestFrame(bt, nil, i+1, scratch)
		if err != nil {
			b.Fatal(err)
		}
		scratch = s
		if err := writeFrame(io.Discard, f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeReply is the Go side of a reply alone: parsing the frame
// and widening 2274 x 4096 bf16 values.
func BenchmarkDecodeReply(b *testing.B) {
	bt := bigBatch(b)
	y := encodeFloats(nil, bt.In, bt.Input.(*oracle.RMSNormInput).X)
	var doc bytes.Buffer
	writeFrame(&doc, &frame{meta: map[string]string{"frame": "reply", "seq": "1"},
		tensors: []tensor{{name: "y", dtype: wireBF16, shape: []int{2274, 4096}, data: y}}})
	var buf []byte
	b.SetBytes(int64(len(y)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, nb, err := readFrame(bytes.NewReader(doc.Bytes()), buf, "reply frame 1", maxFrame)
		if err != nil {
			b.Fatal(err)
		}
		buf = nb
		if _, err := decodeReply(f, bt, nil, 1, "reply frame 1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPipeFloor is the floor for any out-of-process transport on this
// machine: 2274 x 4096 bf16 bytes through cat and back, with no framing,
// conversion or Python.
func BenchmarkPipeFloor(b *testing.B) {
	cmd := exec.Command("cat")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	data := make([]byte, 2*2274*4096)
	back := make([]byte, len(data))
	b.SetBytes(int64(2 * len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		errc := make(chan error, 1)
		go func() { _, err := in.Write(data); errc <- err }()
		if _, err := io.ReadFull(out, back); err != nil {
			b.Fatal(err)
		}
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
	}
}
