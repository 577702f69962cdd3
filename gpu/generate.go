//go:build cuda

package gpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/values"
)

// RowKeys says which row key each generated row has: Base + i for row i
// when SeqLen is 0, else Base + (i/SeqLen)<<32 + i%SeqLen. Token rows
// (rmsnorm, gemm, logprob, decode queries) are RowKeys{}; attention
// prefill's Q, K and V are RowKeys{SeqLen: seqLen}; the K and V cache of
// decode request r is RowKeys{Base: r << 32} (fuzz/inputs/inputs.go).
type RowKeys struct {
	Base   uint64
	SeqLen int
}

// Generated is one tensor's values made on the device by Generate: Rows x
// Cols values of DType, row-major, as the dtype's bits (2 bytes for bf16
// and fp16, 4 for fp32). It holds a pooled buffer until Release.
type Generated struct {
	d          *Device
	buf        *buffer
	Rows, Cols int
	DType      oracle.DType
}

// Generate computes rows [r0, r1) of tensor t, cols values each, on the
// device by input generator version 2 (kernels/gen.cu): row i of the result
// is the row with key keys(r0 + i), bit for bit what t.Row writes for that
// key, so what inputs.Of makes for the tensor of a version 2 case. The
// kernel is queued, not waited for: Bits waits. Boundary values are
// refused: their nudge needs the case's weights, which a lazy batch's run
// has (nudge.go: rmsnorm and gemm); inputs.Of makes them on the host.
func (d *Device) Generate(t values.Tensor, keys RowKeys, r0, r1, cols int) (*Generated, error) {
	if t.Dist == spec.DistBoundary {
		return nil, fmt.Errorf("gpu: generate: boundary values need the case's weights for their nudge; make them with inputs.Of (or run a lazy batch: its rmsnorm and gemm rows are nudged on the device)")
	}
	code, err := values.DistCode(t.Dist)
	if err != nil {
		return nil, fmt.Errorf("gpu: generate: %w", err)
	}
	if t.DType > oracle.FP16 {
		return nil, fmt.Errorf("gpu: generate: unknown dtype %v", t.DType)
	}
	if r0 < 0 || r1 < r0 || cols < 1 || keys.SeqLen < 0 {
		return nil, fmt.Errorf("gpu: generate rows [%d, %d) of %d columns (seq_len %d): %w", r0, r1, cols, keys.SeqLen, oracle.ErrShape)
	}
	rows := r1 - r0
	if rows > math.MaxInt/(4*cols) {
		return nil, fmt.Errorf("gpu: generate %d x %d values: too many: %w", rows, cols, oracle.ErrShape)
	}
	g := &Generated{d: d, Rows: rows, Cols: cols, DType: t.DType}
	err = d.do(func() error {
		var err error
		if g.buf, err = d.pool.get(rows * cols * dsize(t.DType)); err != nil {
			return err
		}
		return d.launchGen(g.buf, t, code, keys, r0, rows, cols)
	})
	if err != nil {
		g.Release()
		return nil, fmt.Errorf("gpu: generate %s %s rows [%d, %d): %w", t.Dist, t.DType, r0, r1, err)
	}
	return g, nil
}

// launchGen queues gen_values for rows [r0, r0+rows) of t into out (under
// do): blocks of up to 256 threads (cols rounded up to a warp), each
// thread writing up to 4 columns of a row, rows spread over grid y, about
// 32 blocks per multiprocessor in all.
func (d *Device) launchGen(out *buffer, t values.Tensor, code int, keys RowKeys, r0, rows, cols int) error {
	block := min(256, (cols+31)/32*32)
	gx := min((cols+4*block-1)/(4*block), 65535)
	gy := min(rows, 65535, max(1, 32*max(d.sms, 1)/gx))
	return d.launch("gen_values", gx, gy, block, ptrArg(out), arg(t.Seed), arg(t.ID), arg(code), arg(t.DType),
		math.Float64bits(t.Scale), arg(r0), arg(rows), arg(cols), arg(keys.Base), arg(keys.SeqLen))
}

// Bits waits for the generation and copies the values back: element i is
// the bits of value i (the low 16 bits for bf16 and fp16).
func (g *Generated) Bits() ([]uint32, error) {
	if g.buf == nil {
		return nil, fmt.Errorf("gpu: generated values already released")
	}
	n, size := g.Rows*g.Cols, dsize(g.DType)
	out := make([]uint32, n)
	err := g.d.do(func() error { return g.d.readBits(out, g.buf, size) })
	if err != nil {
		return nil, fmt.Errorf("gpu: generated values: %w", err)
	}
	return out, nil
}

// readBits copies the first len(out) values of buf, size bytes each (2 for
// bf16 and fp16, 4 for fp32), to out as their bits (under do).
func (d *Device) readBits(out []uint32, buf *buffer, size int) error {
	host := d.stage(len(out) * size)
	if err := d.fromDevice(host, buf, 0); err != nil {
		return err
	}
	for i := range out {
		if size == 2 {
			out[i] = uint32(binary.LittleEndian.Uint16(host[2*i:]))
		} else {
			out[i] = binary.LittleEndian.Uint32(host[4*i:])
		}
	}
	return nil
}

// Release returns the buffer to the device's pool.
func (g *Generated) Release() {
	if g.buf != nil {
		g.d.locked(func() { g.d.pool.put(g.buf) })
		g.buf = nil
	}
}
