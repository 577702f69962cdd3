//go:build cuda

package gpu

import (
	"context"
	"encoding/binary"
	"fmt"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// The bulk check of prefixes: a scan of the items dimension runs the
// batch of held items 0..v-1 for every v of its range and compares every
// row with the same row computed alone. Done one Go-level step at a time
// (Held.Run, two StartCompare, a wait) that costs about twice the GPU's own
// work a step in host time; checkPrefixes queues the steps instead, with
// no host wait per step:
//
//	once     digest_rows: the digest (external.RowDigest) of every row
//	         alone and of its taps, into device buffers
//	per step the target's launch on held items 0..v-1 into one output and
//	         taps buffer sized for the largest prefix (stream order
//	         serialises the steps, so one buffer serves them all), then
//	         check_digests: each output row digested once and counted when
//	         it, or its taps, digests to other than the row alone; the
//	         count lands in page-locked host memory, one word a step
//	chunks   prefixChunkSteps steps a do call, an event after each chunk;
//	         at most prefixChunksInFlight chunks queued: the host reads a
//	         chunk's counts while the next chunk runs, and the context is
//	         checked between chunks
//
// The check only says which prefixes need a closer look: the caller runs
// those again through the exact compare (compare_rows), which names the
// differing rows and columns.

// prefixLauncher is a batch held on a device whose prefixes the bulk
// check runs: Held (rmsnorm), and any other held batch that can launch
// its target on a prefix of its items into buffers it is given.
type prefixLauncher interface {
	// prefixDevice is the lane the batch is held on: every launch goes to
	// its stream.
	prefixDevice() *Device
	// prefixShape is the output of the batch's prefixes.
	prefixShape() prefixShape
	// enqueuePrefix queues on the lane's stream (under do) the target's
	// run of held items 0..v-1, with the schedule the target's policy
	// gives a batch of v items, writing its v*rowsPerItem output rows
	// to out and their fp32 taps (tapCols a row) to taps (nil when
	// tapCols is 0). It does not wait.
	enqueuePrefix(v int, out, taps *buffer) error
}

// prefixShape is the output of a held batch's prefixes: up to items items
// of rowsPerItem rows each, cols values a row stored as dt, and tapCols
// fp32 taps a row (0: no taps).
type prefixShape struct {
	items, rowsPerItem, cols, tapCols int
	dt                                oracle.DType
}

// PrefixDiff is a prefix the bulk check flagged: the batch of held items
// 0..Items-1, of whose rows Rows digest (values or taps) to other than the
// same row alone.
type PrefixDiff struct {
	Items int
	Rows  int
}

// Bulk check limits: steps queued in one do call, and chunks queued at
// once.
const (
	prefixChunkSteps     = 256
	prefixChunksInFlight = 2
)

// digestBlock is the block size of digest_rows and check_digests, and
// digestBlocksPerSM the blocks per multiprocessor their grids are capped
// at (the grid strides over the rows). A block reads a row of 4096 bf16
// values (8 KiB) in one round of 16-byte loads, four a thread in flight;
// twice compare_rows's blocks per multiprocessor keep as many bytes in
// flight as it does, which reads two rows a pair.
const (
	digestBlock       = 128
	digestBlocksPerSM = 16
)

// CheckPrefixes runs the batches of held rows 0..v-1 for v = from..to with
// the schedule the target's policy gives v rows, as Run does, and returns
// the prefixes of which some row differs from the same row in alone (held
// rows 0..to-1 each computed alone, Alone's output): in its output bits
// and, when taps, its fp32 taps. Rows are compared by their digests
// (external.RowDigest), every step queued on the device with no host wait
// between steps; see prefixLauncher. The caller reruns a flagged prefix
// through Run and the exact compare to learn which rows differ and how.
func (h *Held) CheckPrefixes(ctx context.Context, from, to int, alone *target.Output, taps bool) ([]PrefixDiff, error) {
	return checkHeld(ctx, h, h.x == nil, h.t.info.Name, from, to, alone, taps)
}

func (h *Held) prefixDevice() *Device { return h.t.dev }

func (h *Held) prefixShape() prefixShape {
	return prefixShape{items: h.in.Rows, rowsPerItem: 1, cols: h.in.Hidden, tapCols: 2, dt: h.in.Out}
}

func (h *Held) enqueuePrefix(v int, out, taps *buffer) error {
	return h.enqueuePrefixOn(h.t.dev.stream, v, out, taps)
}

func (h *Held) enqueuePrefixOn(st cu.Stream, v int, out, taps *buffer) error {
	plan, err := h.plan(v)
	if err != nil {
		return err
	}
	return h.launchPlan(st, plan, out, taps, nil)
}

// streamPrefixer is a prefixLauncher that can queue a prefix on any of
// its lane's streams (Held): the bulk check then runs consecutive steps on
// prefixStreams side streams at once (fanOut), each with its own output,
// taps and counters, so one step's check overlaps the next step's kernel
// and a kernel whose prefix fills a fraction of the GPU runs beside
// another. Without it every step goes to the lane's stream.
type streamPrefixer interface {
	enqueuePrefixOn(s cu.Stream, v int, out, taps *buffer) error
}

// prefixStreams is how many streams the bulk check spreads its steps over
// when the launcher takes a stream.
const prefixStreams = 4

// checkHeld is the CheckPrefixes of a held batch of target name
// (released: after its Release): checkPrefixes, its error naming the
// target and the prefixes.
func checkHeld(ctx context.Context, l prefixLauncher, released bool, name string, from, to int, alone *target.Output, taps bool) ([]PrefixDiff, error) {
	if released {
		return nil, errReleased
	}
	diffs, err := checkPrefixes(ctx, l, from, to, alone, taps)
	if err != nil {
		return nil, fmt.Errorf("gpu: %s, prefixes %d..%d: %w", name, from, to, err)
	}
	return diffs, nil
}

// checkPrefixes is the bulk check of l's prefixes from..to against alone
// (taps: with the taps); see prefixLauncher.
func checkPrefixes(ctx context.Context, l prefixLauncher, from, to int, alone *target.Output, taps bool) ([]PrefixDiff, error) {
	c, err := newPrefixCheck(l, from, to, alone, taps)
	if err != nil {
		return nil, err
	}
	defer c.release()
	for first := from; first <= to; first += prefixChunkSteps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := c.enqueue(first, min(first+prefixChunkSteps-1, to)); err != nil {
			return nil, err
		}
		if len(c.queued) == prefixChunksInFlight {
			if err := c.finishOldest(); err != nil {
				return nil, err
			}
		}
	}
	for len(c.queued) > 0 {
		if err := c.finishOldest(); err != nil {
			return nil, err
		}
	}
	return c.diffs, nil
}

// prefixCheck is one bulk check in progress.
type prefixCheck struct {
	d       *Device
	l       prefixLauncher
	sh      prefixShape
	taps    bool
	alone   *devOut // values of the rows alone
	par     []prefixSide
	ref     *buffer // digests of the rows alone, one uint64 a row
	refTaps *buffer // digests of their taps
	queued  []*prefixChunk
	diffs   []PrefixDiff
}

// prefixSide is what the steps of one stream of the bulk check reuse: the
// output and taps of a step (sized for the largest prefix), and
// check_digests' two counters, which its last block leaves zero.
type prefixSide struct {
	out, tap, ctr *buffer
}

// prefixChunk is a run of steps queued together: prefixes first..first+n-1,
// whose counts check_digests stores in sl's page-locked memory (4 bytes a
// step, in order), with sl's device counters and sl's event after them.
type prefixChunk struct {
	first, n int
	sl       *slot
}

// newPrefixCheck checks the arguments, takes the step buffers and queues
// the digests of the rows alone.
func newPrefixCheck(l prefixLauncher, from, to int, alone *target.Output, taps bool) (*prefixCheck, error) {
	sh := l.prefixShape()
	if from < 1 || to < from || to > sh.items {
		return nil, fmt.Errorf("prefixes %d..%d of %d held items", from, to, sh.items)
	}
	d := l.prefixDevice()
	rows := to * sh.rowsPerItem
	c := &prefixCheck{d: d, l: l, sh: sh, taps: taps && sh.tapCols > 0}
	var err error
	if c.alone, err = aloneOn(d, alone.Device, "values", rows, sh.cols, sh.dt); err != nil {
		return nil, err
	}
	var aloneTaps *devOut
	if c.taps {
		if aloneTaps, err = aloneOn(d, alone.DeviceTaps, "taps", rows, sh.tapCols, oracle.FP32); err != nil {
			return nil, err
		}
	}
	err = d.do(func() (err error) {
		width := 1
		if _, ok := l.(streamPrefixer); ok {
			width = prefixStreams
		}
		for range width {
			c.par = append(c.par, prefixSide{}) // in c.par at once: release puts back what is taken
			p := &c.par[len(c.par)-1]
			if p.out, err = d.pool.get(rows * sh.cols * dsize(sh.dt)); err != nil {
				return err
			}
			if sh.tapCols > 0 { // the launcher writes its taps, compared or not
				if p.tap, err = d.pool.get(4 * rows * sh.tapCols); err != nil {
					return err
				}
			}
			if p.ctr, err = d.pool.get(8); err != nil {
				return err
			}
			if err := cu.MemsetD32Async(p.ctr.ptr, 0, 2, d.stream); err != nil {
				return fmt.Errorf("zero the counters: %w", err)
			}
		}
		if c.ref, err = d.digestRows(c.alone.buf, rows, sh.cols, sh.dt); err != nil {
			return err
		}
		if c.taps {
			c.refTaps, err = d.digestRows(aloneTaps.buf, rows, sh.tapCols, oracle.FP32)
		}
		return err
	})
	if err != nil {
		c.release()
		return nil, err
	}
	return c, nil
}

// aloneOn returns the device output of the rows alone, checked to be on d
// with at least rows rows of cols values stored as dt.
func aloneOn(d *Device, o target.DeviceOutput, what string, rows, cols int, dt oracle.DType) (*devOut, error) {
	a, ok := o.(*devOut)
	switch {
	case !ok:
		return nil, fmt.Errorf("the %s of the rows alone (%T) are not on a GPU of this package", what, o)
	case a.d != d:
		return nil, fmt.Errorf("the %s of the rows alone live on another device or lane", what)
	case a.buf == nil:
		return nil, fmt.Errorf("the %s of the rows alone were released", what)
	case a.rows < rows || a.cols != cols || a.dt != dt:
		return nil, fmt.Errorf("the %s of the rows alone are %d rows x %d %s, want %d x %d %s", what, a.rows, a.cols, a.dt, rows, cols, dt)
	}
	return a, nil
}

// digestRows queues digest_rows over the first rows rows (cols values of
// dtype dt each) of b and returns the buffer of their digests, one uint64
// a row (under do).
func (d *Device) digestRows(b *buffer, rows, cols int, dt oracle.DType) (*buffer, error) {
	out, err := d.pool.get(8 * rows)
	if err != nil {
		return nil, err
	}
	grid := min(rows, digestBlocksPerSM*d.sms)
	if err := d.launch("digest_rows", grid, 1, digestBlock, ptrArg(b), arg(rows), arg(cols), arg(dt), ptrArg(out)); err != nil {
		d.pool.put(out)
		return nil, err
	}
	return out, nil
}

// enqueue queues the steps of prefixes first..last as one chunk: the
// counts are set to countUnset first, so a step whose check did not run
// is not read as "no row differs".
func (c *prefixCheck) enqueue(first, last int) error {
	ch := &prefixChunk{first: first, n: last - first + 1}
	d, sh := c.d, c.sh
	err := d.do(func() error {
		sl, err := d.takeSlot(4*ch.n, 8)
		if err != nil {
			return err
		}
		for i := range ch.n {
			binary.LittleEndian.PutUint32(sl.host[4*i:], countUnset)
		}
		err = func() error {
			step := func(i int, s cu.Stream) error {
				v, p := first+i, c.par[i%len(c.par)] // fanOut's stream i mod width
				var err error
				if sp, ok := c.l.(streamPrefixer); ok {
					err = sp.enqueuePrefixOn(s, v, p.out, p.tap)
				} else {
					err = c.l.enqueuePrefix(v, p.out, p.tap)
				}
				if err == nil {
					err = c.launchCheck(s, p, v*sh.rowsPerItem, sl.hostAddr+cu.DevicePtr(4*i))
				}
				if err != nil {
					return fmt.Errorf("%d items: %w", v, err)
				}
				return nil
			}
			if len(c.par) > 1 {
				if err := d.fanOut(ch.n, len(c.par), step); err != nil {
					return err
				}
			} else {
				for i := range ch.n {
					if err := step(i, d.stream); err != nil {
						return err
					}
				}
			}
			if err := sl.ev.Record(d.stream); err != nil {
				return fmt.Errorf("record the event: %w", err)
			}
			return nil
		}()
		if err != nil {
			// nothing may still read or write the slot when it is reused
			if serr := d.sync("prefix check"); serr != nil {
				err = fmt.Errorf("%w (then %w)", err, serr)
			}
			d.dropResult(sl)
			d.putSlot(sl)
			return err
		}
		ch.sl = sl
		return nil
	})
	if err != nil {
		return err
	}
	c.queued = append(c.queued, ch)
	return nil
}

// launchCheck launches check_digests on stream s over the first rows rows
// of the step's output in p, with p's counters, the count stored at the
// device address count of mapped page-locked memory (under do).
func (c *prefixCheck) launchCheck(s cu.Stream, p prefixSide, rows int, count cu.DevicePtr) error {
	tapCols := 0
	var taps, refTaps *buffer
	if c.taps {
		tapCols, taps, refTaps = c.sh.tapCols, p.tap, c.refTaps
	}
	grid := min(rows, digestBlocksPerSM*c.d.sms)
	return c.d.launchOn(s, "check_digests", grid, 1, digestBlock, ptrArg(p.out), ptrArg(taps), arg(rows), arg(c.sh.cols),
		arg(c.sh.dt), arg(tapCols), ptrArg(c.ref), ptrArg(refTaps), uint64(p.ctr.ptr), uint64(count))
}

// finishOldest waits for the oldest queued chunk and reads its counts.
func (c *prefixCheck) finishOldest() error {
	ch := c.queued[0]
	c.queued = c.queued[1:]
	return c.finish(ch)
}

// finish waits for chunk ch (without the device's call queue: the next
// chunk is queued meanwhile), records its flagged prefixes and gives its
// slot back.
func (c *prefixCheck) finish(ch *prefixChunk) error {
	d := c.d
	defer d.putSlot(ch.sl)
	if err := d.wait(ch.sl.ev); err != nil {
		d.locked(func() { d.dropResult(ch.sl) })
		return fmt.Errorf("prefixes %d..%d: %w", ch.first, ch.first+ch.n-1, err)
	}
	for i := range ch.n {
		v := ch.first + i
		n := binary.LittleEndian.Uint32(ch.sl.host[4*i:])
		switch {
		case n == countUnset:
			d.locked(func() { d.dropResult(ch.sl) })
			return fmt.Errorf("%d items: check_digests completed without storing its count", v)
		case int(n) > v*c.sh.rowsPerItem:
			return fmt.Errorf("%d items: check_digests counted %d differing rows of %d", v, n, v*c.sh.rowsPerItem)
		case n > 0:
			c.diffs = append(c.diffs, PrefixDiff{Items: v, Rows: int(n)})
		}
	}
	return nil
}

// release waits for the chunks still queued (after an error) and returns
// the check's buffers to the pool.
func (c *prefixCheck) release() {
	for len(c.queued) > 0 {
		c.finishOldest() // an error here follows the one being returned
	}
	c.d.locked(func() {
		for _, p := range c.par {
			c.d.pool.put(p.out, p.tap, p.ctr)
		}
		c.d.pool.put(c.ref, c.refTaps)
	})
}
