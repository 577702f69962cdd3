//go:build cuda

package gpu

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sort"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// devOut is a target's output held on the device: rows x cols values
// stored as dt bits, row-major. It implements target.DeviceOutput.
//
// Relations need not call Release: when an output becomes unreachable its
// buffer goes back to the pool through a runtime cleanup.
type devOut struct {
	*handle
	d          *Device
	rows, cols int
	dt         oracle.DType
}

// handle owns a devOut's buffer; the cleanup holds the handle, never the
// devOut, and Release empties it, so a buffer returns to the pool once.
type handle struct{ buf *buffer }

// newDevOut makes an output of rows x cols dt values whose buffer goes back
// to d's pool on Release or, failing that, when it is garbage collected.
func newDevOut(d *Device, rows, cols int, dt oracle.DType) *devOut {
	o := &devOut{handle: &handle{}, d: d, rows: rows, cols: cols, dt: dt}
	runtime.AddCleanup(o, func(h *handle) { h.free(d) }, o.handle)
	return o
}

// free returns h's buffer, if it still holds one, to d's pool.
func (h *handle) free(d *Device) {
	d.locked(func() {
		if h.buf != nil {
			d.pool.put(h.buf)
			h.buf = nil
		}
	})
}

// compareBlock is the block size of compare_rows, and compareBlocksPerSM
// the blocks per multiprocessor its grid is capped at: the grid strides
// over the pairs, and every block ends with one atomic on a single
// counter: on the H200 a grid of one block per pair (65536 rows, 512 MiB
// a side) took 289 µs against 240 µs with this cap (BenchmarkCompare);
// 8 blocks of 4 warps per multiprocessor keep enough loads in flight to
// stream at copy bandwidth.
const (
	compareBlock       = 128
	compareBlocksPerSM = 8
)

// CompareRows compares row ra[i] of o with row rb[i] of other (positions
// within each output) in dtype dt with the compare_rows kernel and returns
// one summary per differing pair, ordered by i. Only the summaries cross to
// the host.
func (o *devOut) CompareRows(other target.DeviceOutput, ra, rb []int, dt oracle.DType) ([]target.RowDiff, error) {
	wait, err := o.StartCompare(other, ra, rb, dt)
	if err != nil {
		return nil, err
	}
	return wait()
}

// StartCompare queues what CompareRows computes (target.CompareStarter) and
// returns the wait for it, which must be called once: it blocks without
// the device's call queue and gives the compare's slot back.
func (o *devOut) StartCompare(other target.DeviceOutput, ra, rb []int, dt oracle.DType) (func() ([]target.RowDiff, error), error) {
	p, ok := other.(*devOut)
	if !ok {
		return nil, fmt.Errorf("gpu compare: the other output (%T) is not on a GPU of this package", other)
	}
	if p.d != o.d {
		return nil, fmt.Errorf("gpu compare: outputs live on different devices or on different lanes of one (a check runs on one lane)")
	}
	if o.buf == nil || p.buf == nil {
		return nil, fmt.Errorf("gpu compare: output already released")
	}
	if len(ra) != len(rb) {
		return nil, fmt.Errorf("gpu compare: %d rows against %d", len(ra), len(rb))
	}
	if o.cols != p.cols {
		return nil, fmt.Errorf("gpu compare: rows of %d and %d columns", o.cols, p.cols)
	}
	for i := range ra {
		if ra[i] < 0 || ra[i] >= o.rows || rb[i] < 0 || rb[i] >= p.rows {
			return nil, fmt.Errorf("gpu compare: pair %d (%d, %d) outside outputs of %d and %d rows", i, ra[i], rb[i], o.rows, p.rows)
		}
	}
	if len(ra) == 0 {
		return func() ([]target.RowDiff, error) { return nil, nil }, nil
	}
	var sl *slot
	err := o.d.do(func() (err error) {
		sl, err = o.d.enqueueCompare(o.buf, p.buf, o.dt, p.dt, dt, o.cols, ra, rb)
		return err
	})
	if err != nil {
		return nil, err
	}
	return func() ([]target.RowDiff, error) { return o.d.finishCompare(sl, ra, rb) }, nil
}

// enqueueCompare queues a compare of the pairs (ra[i], rb[i]) on the
// lane's stream and returns without waiting (under do):
//
//	pairs: the device copies of ra and rb (pairCache; a list not cached
//	       is written to the slot's page-locked memory and copied async)
//	compare_rows into the slot's device buffer; its last block stores
//	       the count in the slot's page-locked memory
//	record the slot's event
//
// So a compare that finds nothing puts one kernel and one event on the
// stream: no memset and no copy. The slot stays taken until finishCompare
// has read it; only a compare that found differing rows reads their
// summaries (32 bytes a row).
func (d *Device) enqueueCompare(a, b *buffer, adt, bdt, cdt oracle.DType, cols int, ra, rb []int) (*slot, error) {
	n := len(ra)
	sl, err := d.takeSlot(16*n+4, 8+32*n) // pairs, count; counters, then pair, count, first, ulps
	if err != nil {
		return nil, err
	}
	enqueue := func() error {
		pa, err := d.pairs(ra, sl.host[:8*n])
		if err != nil {
			return err
		}
		pb, err := d.pairs(rb, sl.host[8*n:16*n])
		if err != nil {
			return err
		}
		count, addr := sl.countAt(n)
		binary.LittleEndian.PutUint32(count, countUnset)
		if err := d.launchCompare(a, b, adt, bdt, cdt, cols, pa, pb, n, sl.res, addr); err != nil {
			return err
		}
		if err := sl.ev.Record(d.stream); err != nil {
			return fmt.Errorf("gpu compare: record the event: %w", err)
		}
		return nil
	}
	if err := enqueue(); err != nil {
		// nothing may still read or write the slot when it is reused
		if serr := d.sync("compare"); serr != nil {
			err = fmt.Errorf("%w (then %w)", err, serr)
		}
		d.dropResult(sl)
		d.putSlot(sl)
		return nil, err
	}
	return sl, nil
}

// finishCompare waits for a queued compare (Device.wait: without the
// device's lock, so other work is queued meanwhile) and decodes the
// summaries: one per differing pair, ordered by i.
func (d *Device) finishCompare(sl *slot, ra, rb []int) ([]target.RowDiff, error) {
	defer d.putSlot(sl)
	if err := d.wait(sl.ev); err != nil {
		d.locked(func() { d.dropResult(sl) })
		return nil, fmt.Errorf("gpu compare: %w", err)
	}
	n := len(ra)
	count, _ := sl.countAt(n)
	c := binary.LittleEndian.Uint32(count)
	if c == countUnset {
		d.locked(func() { d.dropResult(sl) })
		return nil, fmt.Errorf("gpu compare: compare_rows completed without storing its count")
	}
	cnt := int(c)
	if cnt == 0 {
		return nil, nil
	}
	if cnt > n {
		return nil, fmt.Errorf("gpu compare: the kernel counted %d differing pairs of %d", cnt, n)
	}
	diffs := make([]target.RowDiff, cnt)
	pairs := make([]int, cnt)
	err := d.do(func() error {
		host := d.stage(4 * 8 * n)
		for f := 0; f < 4; f++ { // the first cnt entries of pair, count, first, ulps: four copies, one wait
			if err := d.queueFromDevice(host[f*8*n:f*8*n+8*cnt], sl.res, 8+f*8*n); err != nil {
				return fmt.Errorf("gpu compare: read the summaries: %w", err)
			}
		}
		if err := d.stream.Synchronize(); err != nil {
			return fmt.Errorf("gpu compare: read the summaries: %w", err)
		}
		for s := range diffs {
			g := func(f int) uint64 { return binary.LittleEndian.Uint64(host[f*8*n+8*s:]) }
			p := int(g(0))
			if p < 0 || p >= n {
				return fmt.Errorf("gpu compare: summary %d names pair %d of %d", s, p, n)
			}
			pairs[s] = p
			diffs[s] = target.RowDiff{PosA: ra[p], PosB: rb[p], Count: int(g(1)), FirstCol: int(g(2)), MaxULPs: g(3)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Sort(byPair{pairs, diffs})
	return diffs, nil
}

// launchCompare launches compare_rows over n pairs into res, whose two
// counters must be zero (a slot's are), and has its last block store the
// count at the device address count of mapped page-locked memory (0: no
// store) (under do); it does not wait.
func (d *Device) launchCompare(a, b *buffer, adt, bdt, cdt oracle.DType, cols int, pa, pb *buffer, n int, res *buffer, count cu.DevicePtr) error {
	base := uint64(res.ptr)
	grid := min(n, compareBlocksPerSM*d.sms)
	return d.launch("compare_rows", grid, 1, compareBlock, ptrArg(a), ptrArg(b), ptrArg(pa), ptrArg(pb), arg(n), arg(cols),
		arg(adt), arg(bdt), arg(cdt), base, base+8, base+8+uint64(8*n), base+8+uint64(16*n), base+8+uint64(24*n), uint64(count))
}

type byPair struct {
	p []int
	d []target.RowDiff
}

func (s byPair) Len() int           { return len(s.p) }
func (s byPair) Less(i, j int) bool { return s.p[i] < s.p[j] }
func (s byPair) Swap(i, j int) {
	s.p[i], s.p[j] = s.p[j], s.p[i]
	s.d[i], s.d[j] = s.d[j], s.d[i]
}

// Fetch copies the rows at the given positions to the host, widened to
// fp32 exactly. Up to fetchAsyncMax bytes the copies are queued into a
// compare slot's page-locked memory and waited for without the device's
// lock (Device.wait), so a fetch does not stall the other callers' work
// behind everything already queued; larger fetches copy synchronously.
func (o *devOut) Fetch(pos []int) ([]float32, error) {
	for _, p := range pos {
		if p < 0 || p >= o.rows {
			return nil, fmt.Errorf("gpu fetch: position %d outside an output of %d rows", p, o.rows)
		}
	}
	out := make([]float32, len(pos)*o.cols)
	row := o.cols * dsize(o.dt)
	if len(pos)*row > fetchAsyncMax {
		err := o.d.do(func() error {
			if o.buf == nil {
				return fmt.Errorf("gpu fetch: output already released")
			}
			return runs(pos, func(i, j int) error {
				host := o.d.stage((j - i) * row)
				if err := o.d.fromDevice(host, o.buf, pos[i]*row); err != nil {
					return err
				}
				decode(out[i*o.cols:j*o.cols], o.dt, host)
				return nil
			})
		})
		return out, err
	}
	var sl *slot
	err := o.d.do(func() (err error) {
		if o.buf == nil {
			return fmt.Errorf("gpu fetch: output already released")
		}
		if sl, err = o.d.takeSlot(len(pos)*row, 8); err != nil {
			return err
		}
		err = runs(pos, func(i, j int) error {
			host := sl.host[i*row : j*row]
			if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&host[0]), o.buf.ptr+cu.DevicePtr(pos[i]*row), int64(len(host)), o.d.stream); err != nil {
				return fmt.Errorf("gpu fetch: queue a copy of %d bytes to the host: %w", len(host), err)
			}
			return nil
		})
		if err == nil {
			if err = sl.ev.Record(o.d.stream); err != nil {
				err = fmt.Errorf("gpu fetch: record the event: %w", err)
			}
		}
		if err != nil {
			// nothing may still write the slot's memory when it is reused
			if serr := o.d.sync("fetch"); serr != nil {
				err = fmt.Errorf("%w (then %w)", err, serr)
			}
			o.d.putSlot(sl)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	defer o.d.putSlot(sl)
	if err := o.d.wait(sl.ev); err != nil {
		return nil, fmt.Errorf("gpu fetch: %w", err)
	}
	decode(out, o.dt, sl.host[:len(pos)*row])
	return out, nil
}

// RowDigests digests rows 0..max(pos) of the output on the device
// (digest_rows, external.RowDigest over each row's bits in the output's
// dtype), copies those digests to the host, 8 bytes a row, and returns
// the digests of pos: a witness of a differing row costs no row's copy
// and no hashing on the host (target.RowDigester).
func (o *devOut) RowDigests(pos []int) ([]uint64, error) {
	n := 0
	for _, p := range pos {
		if p < 0 || p >= o.rows {
			return nil, fmt.Errorf("gpu digests: position %d outside an output of %d rows", p, o.rows)
		}
		n = max(n, p+1)
	}
	if n == 0 {
		return nil, nil
	}
	var all []uint64
	err := o.d.do(func() error {
		if o.buf == nil {
			return fmt.Errorf("gpu digests: output already released")
		}
		dg, err := o.d.digestRows(o.buf, n, o.cols, o.dt)
		if err != nil {
			return fmt.Errorf("gpu digests: %w", err)
		}
		defer o.d.pool.put(dg)
		host := o.d.stage(8 * n)
		if err := o.d.fromDevice(host, dg, 0); err != nil {
			return fmt.Errorf("gpu digests: %w", err)
		}
		all = uint64s(host, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	ds := make([]uint64, len(pos))
	for i, p := range pos {
		ds[i] = all[p]
	}
	return ds, nil
}

// fetchAsyncMax is the largest fetch queued through a slot's page-locked
// memory (Fetch): the size of an upload chunk.
const fetchAsyncMax = uploadChunk

// runs calls f(i, j) for each run pos[i:j] of consecutive positions, in
// order, so each run is one copy.
func runs(pos []int, f func(i, j int) error) error {
	for i := 0; i < len(pos); {
		j := i + 1
		for j < len(pos) && pos[j] == pos[j-1]+1 {
			j++
		}
		if err := f(i, j); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// Release returns the output's buffer to the device's pool. It is safe to
// call more than once.
func (o *devOut) Release() { o.free(o.d) }

// Upload puts a host output on the device (stored as o.DType), so it can be
// compared there with a device output: for tests and for relations that
// hold one side on the host.
func (d *Device) Upload(o *target.Output) (target.DeviceOutput, error) {
	if len(o.Values) != len(o.Rows)*o.Cols {
		return nil, fmt.Errorf("gpu upload: %d values for %d rows of %d", len(o.Values), len(o.Rows), o.Cols)
	}
	out := newDevOut(d, len(o.Rows), o.Cols, o.DType)
	err := d.do(func() (err error) {
		out.buf, err = d.upload(o.DType, o.Values)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
