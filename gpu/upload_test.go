//go:build cuda

package gpu

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/values"
)

// TestUploadRing queues three rings' worth of uploads of random sizes with
// nothing waited for between them, so the ring wraps while copies may still
// be queued, then reads every buffer back: each holds exactly its bytes (no
// chunk was written again before its copies ran), and the ring did wait
// for a chunk's event.
func TestUploadRing(t *testing.T) {
	d := device(t)
	r := rand.New(rand.NewPCG(7, 7))
	var bufs []*buffer
	var want [][]byte
	defer d.do(func() error { d.pool.put(bufs...); return nil })
	waits0 := 0
	d.do(func() error { waits0 = d.ring.waits; return nil })
	for total := 0; total < 3*uploadChunks*uploadChunk; {
		n := 1 + r.IntN(uploadChunk/3)
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		err := d.do(func() error {
			host, err := d.stageUpload(n)
			if err != nil {
				return err
			}
			if !d.ring.holds(host) {
				t.Errorf("an upload of %d bytes was not staged in the ring", n)
			}
			copy(host, src)
			b, err := d.toDevice(host)
			if err != nil {
				return err
			}
			bufs = append(bufs, b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, src)
		total += n
	}
	err := d.do(func() error {
		for i, b := range bufs {
			got := make([]byte, len(want[i]))
			if err := d.fromDevice(got, b, 0); err != nil {
				return err
			}
			if !bytes.Equal(got, want[i]) {
				t.Errorf("upload %d of %d bytes: the device holds other bytes", i, len(want[i]))
			}
		}
		if d.ring.waits == waits0 {
			t.Errorf("the ring wrapped %d times without waiting for a chunk's copies", 3)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// an upload over a chunk goes through the staging buffer
	d.do(func() error {
		host, err := d.stageUpload(uploadChunk + 1)
		if err != nil {
			t.Fatal(err)
		}
		if d.ring.holds(host) {
			t.Errorf("an upload of more than a chunk was staged in the ring")
		}
		return nil
	})
}

// TestGeneratedCache checks that the runs of one case share its generated
// rows: a smaller request is served by the kept tensor, a larger one
// replaces it, a kept buffer survives the callers' pool.put, the rows hold
// the host's values, and the cache stays within its bounds.
func TestGeneratedCache(t *testing.T) {
	d := device(t)
	tn := values.Tensor{Seed: 5, ID: values.TensorX, Dist: spec.DistNormal, DType: oracle.BF16, Scale: 1}
	const cols = 96
	get := func(tn values.Tensor, rows int) (b *buffer, hits, misses int) {
		t.Helper()
		err := d.do(func() error {
			var err error
			b, err = d.generated(tn, 0, rows, cols, nil)
			hits, misses = d.gens.hits, d.gens.misses
			d.pool.put(b) // what every caller does; a kept buffer stays
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return b, hits, misses
	}
	a, h0, m0 := get(tn, 10)
	b, h1, m1 := get(tn, 4)
	if b != a || h1 != h0+1 || m1 != m0 {
		t.Fatalf("4 rows after 10: buffer %p after %p, hits %d->%d, misses %d->%d; want the same buffer, a hit", b, a, h0, h1, m0, m1)
	}
	c, _, m2 := get(tn, 20)
	if c == a || m2 != m1+1 {
		t.Fatalf("20 rows after 10: want a new buffer and a miss")
	}
	var n int
	err := d.do(func() error {
		for _, e := range d.gens.entries {
			if e.t == tn {
				n++
			}
		}
		host := make([]byte, 20*cols*2)
		if err := d.fromDevice(host, c, 0); err != nil {
			return err
		}
		row := make([]float32, cols)
		for r := range 20 {
			if err := tn.Row(row, uint64(r)); err != nil {
				return err
			}
			for j, v := range row {
				if got := binary.LittleEndian.Uint16(host[2*(r*cols+j):]); got != oracle.BF16FromF32(v) {
					t.Fatalf("row %d column %d: device %#04x, host %#04x", r, j, got, oracle.BF16FromF32(v))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d kept tensors of one recipe, want 1 (the larger replaces the smaller)", n)
	}
	for s := range 3 * genCacheEntries {
		get(values.Tensor{Seed: 100 + uint64(s), ID: values.TensorX, DType: oracle.BF16, Scale: 1}, 8)
	}
	d.do(func() error {
		if len(d.gens.entries) > genCacheEntries || d.gens.bytes > genCacheBytes {
			t.Errorf("%d kept tensors, %d bytes; bounds %d, %d", len(d.gens.entries), d.gens.bytes, genCacheEntries, genCacheBytes)
		}
		return nil
	})
}

// TestUploadShared: the same bytes again are served by the kept copy (no
// upload), other bytes of the same length are not, the copy survives the
// callers' pool.put and holds the bytes, and the cache stays bounded.
func TestUploadShared(t *testing.T) {
	d := device(t)
	enc := func(v float32, n int) []byte {
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = v + float32(i)
		}
		return encoded(oracle.FP32, vals)
	}
	up := func(host []byte) (b *buffer, hits, misses int) {
		t.Helper()
		err := d.do(func() (err error) {
			b, err = d.uploadShared(host)
			hits, misses = d.shared.hits, d.shared.misses
			d.pool.put(b) // what every caller does
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	a, h0, m0 := up(enc(1, 4096))
	b, h1, m1 := up(enc(1, 4096))
	if b != a || h1 != h0+1 || m1 != m0 {
		t.Fatalf("the same bytes again: buffer %p after %p, hits %d->%d, misses %d->%d", b, a, h0, h1, m0, m1)
	}
	c, _, m2 := up(enc(2, 4096))
	if c == a || m2 != m1+1 {
		t.Fatalf("other bytes: want another buffer and a miss")
	}
	want := enc(1, 4096)
	d.do(func() error {
		got := make([]byte, len(want))
		if err := d.fromDevice(got, a, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Error("the kept copy does not hold the bytes uploaded")
		}
		return nil
	})
	for k := range 3 * sharedEntries {
		up(enc(float32(100+k), 64))
	}
	d.do(func() error {
		if len(d.shared.entries) > sharedEntries {
			t.Errorf("%d shared tensors kept, bound %d", len(d.shared.entries), sharedEntries)
		}
		return nil
	})
}
