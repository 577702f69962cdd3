//go:build cuda

package gpu

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"
	"unsafe"

	"github.com/bitparity/bitparity/spec"
	"gorgonia.org/cu"
)

// Pair-list cache limits: entries and device bytes held.
const (
	pairCacheEntries = 64
	pairCacheBytes   = 64 << 20
)

// pairEntry is a pair list held on the device (int64 per position).
type pairEntry struct {
	host []int // the list, compared in full on every hit
	buf  *buffer
	used uint64 // clock of the last use
}

// pairCache keeps the device copies of recently compared pair lists, so a
// check that compares the same rows as an earlier one (identity lists, the
// same sub-batch, the outputs and then the taps of one check) queues no
// upload: on a lane's stream every small copy costs a few microseconds
// between kernels. Entries are found by a hash of the list and confirmed
// by comparing the whole list, so a hash collision cannot hand a compare
// another list. Owned by the call running on the device (do).
type pairCache struct {
	seed    maphash.Seed
	entries map[uint64][]*pairEntry
	n       int
	bytes   int
	clock   uint64
	hits    int // tests and benchmarks read them
	misses  int
}

func (c *pairCache) key(list []int) uint64 {
	if c.entries == nil {
		c.seed, c.entries = maphash.MakeSeed(), map[uint64][]*pairEntry{}
	}
	if len(list) == 0 {
		return maphash.Bytes(c.seed, nil)
	}
	return maphash.Bytes(c.seed, unsafe.Slice((*byte)(unsafe.Pointer(&list[0])), len(list)*int(unsafe.Sizeof(list[0]))))
}

// pairs returns the device copy of list (under do): for 0, 1, ..., n-1 the
// first n entries of the device's identity list, else a cache entry. On a miss it writes the
// list as int64 into host, page-locked memory that must stay untouched
// until the stream has passed this point (a compare's slot), and queues an
// asynchronous copy into a new cache entry.
func (d *Device) pairs(list []int, host []byte) (*buffer, error) {
	if spec.IsIota(list) {
		return d.identity(len(list))
	}
	c := &d.pairCache
	k := c.key(list)
	c.clock++
	for _, e := range c.entries[k] {
		if slices.Equal(e.host, list) {
			e.used = c.clock
			c.hits++
			return e.buf, nil
		}
	}
	c.misses++
	buf, err := d.pool.get(8 * len(list))
	if err != nil {
		return nil, err
	}
	for i, v := range list {
		binary.LittleEndian.PutUint64(host[8*i:], uint64(v))
	}
	if len(list) > 0 {
		if err := cu.MemcpyHtoDAsync(buf.ptr, unsafe.Pointer(&host[0]), int64(8*len(list)), d.stream); err != nil {
			d.pool.put(buf)
			return nil, fmt.Errorf("gpu compare: copy the pairs: %w", err)
		}
	}
	e := &pairEntry{host: slices.Clone(list), buf: buf, used: c.clock}
	c.entries[k] = append(c.entries[k], e)
	c.n++
	c.bytes += buf.cap
	for (c.n > pairCacheEntries || c.bytes > pairCacheBytes) && d.evictPair(e) {
	}
	return buf, nil
}

// evictPair drops the least recently used entry other than keep and says
// whether there was one; its buffer goes back to the pool (a later writer
// is queued after every compare that read it).
func (d *Device) evictPair(keep *pairEntry) bool {
	c := &d.pairCache
	var oldK uint64
	var old *pairEntry
	for k, es := range c.entries {
		for _, e := range es {
			if e != keep && (old == nil || e.used < old.used) {
				oldK, old = k, e
			}
		}
	}
	if old == nil {
		return false
	}
	c.entries[oldK] = slices.DeleteFunc(c.entries[oldK], func(e *pairEntry) bool { return e == old })
	if len(c.entries[oldK]) == 0 {
		delete(c.entries, oldK)
	}
	c.n--
	c.bytes -= old.buf.cap
	d.pool.put(old.buf)
	return true
}

// identity returns a device list of int64 0, 1, ... of at least n entries
// (under do), grown (doubling) when n passes its length: the pairs of every
// compare of whole batches in order, which a scan makes for every value of
// its range, and the row selection of every batch that reads the first
// rows in order, so they are neither uploaded nor cached one by one.
func (d *Device) identity(n int) (*buffer, error) {
	if d.ident != nil && d.identN >= n {
		return d.ident, nil
	}
	m := max(n, 2*d.identN, 1024)
	host, err := d.stageUpload(8 * m)
	if err != nil {
		return nil, err
	}
	for i := range m {
		binary.LittleEndian.PutUint64(host[8*i:], uint64(i))
	}
	b, err := d.toDevice(host)
	if err != nil {
		return nil, fmt.Errorf("gpu compare: the identity pairs: %w", err)
	}
	if d.ident != nil {
		d.ident.kept = false
		d.pool.put(d.ident) // later writers are queued after every compare that read it
	}
	b.kept = true // callers that put a row selection back leave it
	d.ident, d.identN = b, m
	return b, nil
}
