//go:build cuda

package gpu

import (
	"bytes"
	"fmt"
	"slices"
	"unsafe"

	"gorgonia.org/cu"
)

// Upload ring geometry: uploadChunks chunks of uploadChunk bytes of
// page-locked memory. An upload of at most uploadChunk bytes is copied
// from the ring without waiting; a larger one through the staging buffer,
// synchronously.
const (
	uploadChunks = 8
	uploadChunk  = 16 << 20
)

// uploadRing is page-locked host memory that small uploads are copied
// from asynchronously (cuMemcpyHtoDAsync on the lane's stream), so an
// upload queues a copy instead of draining the stream: a synchronous
// cuMemcpyHtoD waits for every kernel queued before it, which left the GPU
// idle between the runs of concurrent checks.
//
// The ring is cut into chunks filled in turn, each pinned when the ring
// first reaches it, so a scan whose uploads are small pins one chunk, not
// the whole ring: the whole ring, pinned at its first upload, took 47 to
// 76 ms of a cuBLAS scan's first draw on an H100 (0.37 to 0.59 ms a MiB),
// and the scan with chunks pinned as reached took 0.89 of the time (three
// draws, medians of three alternated runs). Bytes handed out are never
// written again until the copies that read them have run: when the ring
// leaves a chunk it records the chunk's event after that chunk's copies,
// and before it writes the chunk again it waits for that event (by then
// long past, unless uploads outrun the device by the whole ring). Owned by
// the call running on the device (do).
type uploadRing struct {
	mem      [uploadChunks][]byte // page-locked, uploadChunk bytes each; nil until the ring first reaches it
	ev       [uploadChunks]cu.Event
	made     bool               // the events were made (with the first chunk)
	failed   bool               // a chunk could not be pinned: uploads are synchronous from then on
	recorded [uploadChunks]bool // ev[i] was recorded when the ring left chunk i
	cur, off int                // the chunk being filled and its next free byte
	waits    int                // waits for a chunk's event (tests read it)
}

// take returns n bytes of the ring to fill and copy from (under do), or nil
// when n is over a chunk or no page-locked memory could be had. stream is
// the lane's, which the copies from the ring go to: a chunk's event is
// recorded there.
func (r *uploadRing) take(n int, stream cu.Stream) ([]byte, error) {
	if n > uploadChunk || r.failed {
		return nil, nil
	}
	n = (n + 15) &^ 15 // keep every upload 16-byte aligned
	if r.mem[r.cur] != nil && r.off+n > uploadChunk {
		if err := r.ev[r.cur].Record(stream); err != nil {
			return nil, fmt.Errorf("gpu: record an upload event: %w", err)
		}
		r.recorded[r.cur] = true
		r.cur, r.off = (r.cur+1)%uploadChunks, 0
		if r.recorded[r.cur] {
			r.waits++
			if err := r.ev[r.cur].Synchronize(); err != nil {
				return nil, fmt.Errorf("gpu: wait for the uploads of a staging chunk: %w", err)
			}
			r.recorded[r.cur] = false
		}
	}
	if r.mem[r.cur] == nil {
		if err := r.pin(); err != nil || r.failed {
			return nil, err
		}
	}
	at := r.off
	r.off += n
	return r.mem[r.cur][at : at+n : at+n], nil
}

// pin pins the chunk the ring is at, making the ring's events with the
// first; a chunk that cannot be pinned sets failed (uploads fall back to
// synchronous copies).
func (r *uploadRing) pin() error {
	p, err := allocPinned(uploadChunk)
	if err != nil {
		r.failed = true
		return nil
	}
	if !r.made {
		for i := range r.ev {
			if r.ev[i], err = cu.MakeEvent(cu.DisableTiming); err != nil {
				for j := range i {
					cu.DestroyEvent(&r.ev[j])
				}
				freePinned(p)
				return fmt.Errorf("gpu: create an upload event: %w", err)
			}
		}
		r.made = true
	}
	r.mem[r.cur] = p
	return nil
}

// holds reports whether host lies in the ring.
func (r *uploadRing) holds(host []byte) bool {
	if len(host) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(&host[0]))
	for _, c := range r.mem {
		if len(c) > 0 {
			lo := uintptr(unsafe.Pointer(&c[0]))
			if p >= lo && p < lo+uintptr(len(c)) {
				return true
			}
		}
	}
	return false
}

// stageUpload returns n bytes of host memory to fill with what toDevice
// then copies to the device: ring memory (an asynchronous copy) when n fits
// a chunk, else the staging buffer (a synchronous one) (under do).
func (d *Device) stageUpload(n int) ([]byte, error) {
	host, err := d.ring.take(n, d.stream)
	if err != nil {
		return nil, err
	}
	if host == nil {
		return d.stage(n), nil
	}
	return host[:n], nil
}

// uploadBytes copies host bytes encoded outside the call queue (encoded) to a
// pooled device buffer (under do), through stageUpload; host is given
// back (putHost).
func (d *Device) uploadBytes(host []byte) (*buffer, error) {
	defer putHost(host)
	staged, err := d.stageUpload(len(host))
	if err != nil {
		return nil, err
	}
	copy(staged, host)
	return d.toDevice(staged)
}

// Shared-tensor cache limits: entries, and the largest tensor kept.
const (
	sharedEntries  = 32
	sharedMaxBytes = 1 << 20
)

// sharedEntry is an encoded shared tensor and its device copy.
type sharedEntry struct {
	host []byte
	buf  *buffer
	used uint64 // clock of the last use
}

// sharedCache keeps the device copies of the shared tensors lately
// uploaded (a case's weights, which every run of a check hands over
// again), so the runs of a check after the first queue no copy. An entry
// is found by comparing the encoded bytes in full. Owned by the call running on
// the device (do).
type sharedCache struct {
	entries      []*sharedEntry
	clock        uint64
	hits, misses int // tests and benchmarks read them
}

// uploadShared is uploadBytes for a tensor that later runs are likely to
// upload again with the same bits (under do): a kept device copy when one
// holds these bytes, else an upload that is kept (buffer.kept: callers put
// it back as any input, and the cache decides when it goes).
func (d *Device) uploadShared(host []byte) (*buffer, error) {
	if len(host) > sharedMaxBytes {
		return d.uploadBytes(host)
	}
	c := &d.shared
	c.clock++
	for _, e := range c.entries {
		if bytes.Equal(e.host, host) {
			e.used = c.clock
			c.hits++
			putHost(host)
			return e.buf, nil
		}
	}
	c.misses++
	keep := bytes.Clone(host)
	b, err := d.uploadBytes(host)
	if err != nil {
		return nil, err
	}
	b.kept = true
	c.entries = append(c.entries, &sharedEntry{host: keep, buf: b, used: c.clock})
	if len(c.entries) > sharedEntries {
		lru := 0
		for i, e := range c.entries {
			if e.used < c.entries[lru].used {
				lru = i
			}
		}
		old := c.entries[lru]
		c.entries = slices.Delete(c.entries, lru, lru+1)
		old.buf.kept = false
		d.pool.put(old.buf) // later writers are queued after every run that read it
	}
	return b, nil
}
