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
// row with the same row computed alone and in the reference batch. Done
// one Go-level step at a time (Held.Run, two StartCompare, a wait) that
// costs about twice the GPU's own work a step in host time; checkPrefixes
// queues the steps instead, with no host wait per step:
//
//	once     digest_rows: the digest (external.RowDigest) of every row
//	         alone, of the reference batch's, and of their taps, into
//	         device buffers
//	per step the target's launch on held items 0..v-1 into one output and
//	         taps buffer sized for the largest prefix (stream order
//	         serialises the steps, so one buffer serves them all), then
//	         check_steps: each output row digested once and compared with
//	         the row alone and in the reference batch; the step's record
//	         (the count of rows differing from alone, a sum of every row's
//	         digest, and for a step with such a row the digests of its
//	         first panel rows and which rows differ) lands in page-locked
//	         host memory
//	chunks   prefixChunkSteps steps a do call, an event after each chunk;
//	         at most prefixChunksInFlight chunks queued: the host reads a
//	         chunk's records while the next chunk runs, and the context is
//	         checked between chunks
//
// So a flagged step is settled from its record, with nothing run again
// and no row fetched: the scan checks the flagged steps a second time
// the same way and compares the two records (determinism).

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

// Bulk check limits: steps queued in one do call, and chunks queued at
// once.
const (
	prefixChunkSteps     = 256
	prefixChunksInFlight = 2
)

// digestBlock is the block size of digest_rows and check_steps, and
// digestBlocksPerSM the blocks per multiprocessor their grids are capped
// at (the grid strides over the rows). A block reads a row of 4096 bf16
// values (8 KiB) in one round of 16-byte loads, four a thread in flight;
// twice compare_rows's blocks per multiprocessor keep as many bytes in
// flight as it does, which reads two rows a pair.
const (
	digestBlock       = 128
	digestBlocksPerSM = 16
)

// CheckPrefixes runs the batches of held rows 0..v-1 for v in c.Items
// with the schedule the target's policy gives v rows, as Run does, and
// returns the prefixes of which some row differs from the same row in
// c.Alone (held rows each computed alone, Alone's output): in its output
// bits and, when c.Taps, its fp32 taps; with, for each, which rows differ
// from the row alone and in c.Ref, the digests of its first c.Panel rows,
// and a sum of its whole output. Rows are compared by their digests
// (external.RowDigest), every step queued on the device with no host wait
// between steps; see prefixLauncher.
func (h *Held) CheckPrefixes(ctx context.Context, c PrefixCheck) ([]PrefixStep, error) {
	return checkHeld(ctx, h, h.x == nil, h.t.info.Name, c)
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
func checkHeld(ctx context.Context, l prefixLauncher, released bool, name string, c PrefixCheck) ([]PrefixStep, error) {
	if released {
		return nil, errReleased
	}
	steps, err := checkPrefixes(ctx, l, c)
	if err != nil {
		return nil, fmt.Errorf("gpu: %s, %s: %w", name, prefixesWord(c.Items), err)
	}
	return steps, nil
}

// prefixesWord names prefixes items in an error: "prefixes 64..1087".
func prefixesWord(items []int) string {
	if len(items) == 0 {
		return "no prefixes"
	}
	return fmt.Sprintf("prefixes %d..%d", items[0], items[len(items)-1])
}

// checkPrefixes is the bulk check c of l's prefixes; see prefixLauncher.
func checkPrefixes(ctx context.Context, l prefixLauncher, c PrefixCheck) ([]PrefixStep, error) {
	pc, err := newPrefixCheck(l, c)
	if err != nil {
		return nil, err
	}
	defer pc.release()
	for i := 0; i < len(c.Items); i += prefixChunkSteps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := pc.enqueue(c.Items[i:min(i+prefixChunkSteps, len(c.Items))]); err != nil {
			return nil, err
		}
		if len(pc.queued) == prefixChunksInFlight {
			if err := pc.finishOldest(); err != nil {
				return nil, err
			}
		}
	}
	for len(pc.queued) > 0 {
		if err := pc.finishOldest(); err != nil {
			return nil, err
		}
	}
	return pc.steps, nil
}

// prefixCheck is one bulk check in progress.
type prefixCheck struct {
	d    *Device
	l    prefixLauncher
	sh   prefixShape
	taps bool // the taps are compared
	par  []prefixSide
	// the digests of the rows alone and of the reference batch's rows,
	// and of their taps, one uint64 a row (ref nil without a reference
	// batch, the taps' nil when not compared)
	aloneDg, aloneTapDg, refDg, refTapDg *buffer
	panel, words                         int // panel rows and bitmap words a step
	queued                               []*prefixChunk
	steps                                []PrefixStep
}

// prefixSide is what the steps of one stream of the bulk check reuse: the
// output and taps of a step (sized for the largest prefix), and
// check_steps' counters, panel digests and row bitmaps, which its last
// block leaves zero.
type prefixSide struct {
	out, tap, ctr, panel, bits *buffer
}

// prefixChunk is a run of steps queued together, the prefixes items,
// whose records check_steps stores in sl's page-locked memory (recordSize
// bytes a step, in order), with sl's event after them.
type prefixChunk struct {
	items []int
	sl    *slot
}

// recordSize is the bytes of one step's record (stepRecordSize).
func (c *prefixCheck) recordSize() int { return stepRecordSize(c.panel, c.words) }

// newPrefixCheck checks the arguments, takes the step buffers and queues
// the digests of the rows alone and of the reference batch.
func newPrefixCheck(l prefixLauncher, q PrefixCheck) (*prefixCheck, error) {
	sh := l.prefixShape()
	if len(q.Items) == 0 || q.Items[0] < 1 || q.Items[len(q.Items)-1] > sh.items || !strictlyAscending(q.Items) {
		return nil, fmt.Errorf("%s of %d held items: want ascending prefixes of 1..%d", prefixesWord(q.Items), sh.items, sh.items)
	}
	if q.Panel < 0 || q.Alone == nil {
		return nil, fmt.Errorf("a check of %d panel rows against %v rows alone", q.Panel, q.Alone)
	}
	d := l.prefixDevice()
	rows := q.Items[len(q.Items)-1] * sh.rowsPerItem
	c := &prefixCheck{d: d, l: l, sh: sh, taps: q.Taps && sh.tapCols > 0, panel: min(q.Panel, rows), words: (rows + 31) / 32}
	alone, err := c.comparedOn(q.Alone, "the rows alone", rows)
	if err != nil {
		return nil, err
	}
	var ref compared
	if q.Ref != nil {
		if ref, err = c.comparedOn(q.Ref, "the reference batch", rows); err != nil {
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
			if err := c.takeSide(&c.par[len(c.par)-1], rows); err != nil {
				return err
			}
		}
		if c.aloneDg, c.aloneTapDg, err = c.digests(alone, rows); err != nil || ref.vals == nil {
			return err
		}
		c.refDg, c.refTapDg, err = c.digests(ref, rows)
		return err
	})
	if err != nil {
		c.release()
		return nil, err
	}
	return c, nil
}

// compared is an output the steps are compared with: its values, and its
// taps when they are compared (else nil).
type compared struct{ vals, taps *devOut }

// comparedOn returns output o (name, in an error) as compared, checked
// to be on the check's device with at least rows rows of the steps' shape.
func (c *prefixCheck) comparedOn(o *target.Output, name string, rows int) (compared, error) {
	var x compared
	var err error
	if x.vals, err = onDevice(c.d, o.Device, "values of "+name, rows, c.sh.cols, c.sh.dt); err != nil || !c.taps {
		return x, err
	}
	x.taps, err = onDevice(c.d, o.DeviceTaps, "taps of "+name, rows, c.sh.tapCols, oracle.FP32)
	return x, err
}

// digests queues digest_rows over the first rows rows of x's values and
// taps and returns the buffers of their digests (taps nil when x has
// none), those made so far on an error (under do).
func (c *prefixCheck) digests(x compared, rows int) (vals, taps *buffer, err error) {
	if vals, err = c.d.digestRows(x.vals.buf, rows, c.sh.cols, c.sh.dt); err != nil || x.taps == nil {
		return vals, nil, err
	}
	taps, err = c.d.digestRows(x.taps.buf, rows, c.sh.tapCols, oracle.FP32)
	return vals, taps, err
}

// strictlyAscending reports whether every value of vs is above the one
// before it.
func strictlyAscending(vs []int) bool {
	for i := 1; i < len(vs); i++ {
		if vs[i] <= vs[i-1] {
			return false
		}
	}
	return true
}

// takeSide takes the buffers of one stream of the check for steps of up
// to rows rows, and zeroes its counters and bitmaps (under do).
func (c *prefixCheck) takeSide(p *prefixSide, rows int) error {
	d, sh := c.d, c.sh
	var err error
	if p.out, err = d.pool.get(rows * sh.cols * dsize(sh.dt)); err != nil {
		return err
	}
	if sh.tapCols > 0 { // the launcher writes its taps, compared or not
		if p.tap, err = d.pool.get(4 * rows * sh.tapCols); err != nil {
			return err
		}
	}
	if p.panel, err = d.pool.get(max(16*c.panel, 16)); err != nil {
		return err
	}
	if p.ctr, err = d.pool.get(24); err != nil {
		return err
	}
	if p.bits, err = d.pool.get(8 * c.words); err != nil {
		return err
	}
	if err := cu.MemsetD32Async(p.ctr.ptr, 0, 6, d.stream); err != nil {
		return fmt.Errorf("zero the counters: %w", err)
	}
	if err := cu.MemsetD32Async(p.bits.ptr, 0, int64(2*c.words), d.stream); err != nil {
		return fmt.Errorf("zero the row bitmaps: %w", err)
	}
	return nil
}

// onDevice returns the device output o (what it holds, in an error),
// checked to be on d with at least rows rows of cols values stored as dt.
func onDevice(d *Device, o target.DeviceOutput, what string, rows, cols int, dt oracle.DType) (*devOut, error) {
	a, ok := o.(*devOut)
	switch {
	case !ok:
		return nil, fmt.Errorf("the %s (%T) are not on a GPU of this package", what, o)
	case a.d != d:
		return nil, fmt.Errorf("the %s live on another device or lane", what)
	case a.buf == nil:
		return nil, fmt.Errorf("the %s were released", what)
	case a.rows < rows || a.cols != cols || a.dt != dt:
		return nil, fmt.Errorf("the %s are %d rows x %d %s, want %d x %d %s", what, a.rows, a.cols, a.dt, rows, cols, dt)
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

// enqueue queues the steps of prefixes items as one chunk: the counts are
// set to countUnset first, so a step whose check did not run is not read
// as "no row differs".
func (c *prefixCheck) enqueue(items []int) error {
	ch := &prefixChunk{items: items}
	d, sh, size := c.d, c.sh, c.recordSize()
	err := d.do(func() error {
		sl, err := d.takeSlot(size*len(items), 8)
		if err != nil {
			return err
		}
		for i := range items {
			binary.LittleEndian.PutUint32(sl.host[size*i:], countUnset)
		}
		err = func() error {
			step := func(i int, s cu.Stream) error {
				v, p := items[i], c.par[i%len(c.par)] // fanOut's stream i mod width
				var err error
				if sp, ok := c.l.(streamPrefixer); ok {
					err = sp.enqueuePrefixOn(s, v, p.out, p.tap)
				} else {
					err = c.l.enqueuePrefix(v, p.out, p.tap)
				}
				if err == nil {
					err = c.launchCheck(s, p, v*sh.rowsPerItem, sl.hostAddr+cu.DevicePtr(size*i))
				}
				if err != nil {
					return fmt.Errorf("%d items: %w", v, err)
				}
				return nil
			}
			if len(c.par) > 1 {
				if err := d.fanOut(len(items), len(c.par), step); err != nil {
					return err
				}
			} else {
				for i := range items {
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

// launchCheck launches check_steps on stream s over the first rows rows
// of the step's output in p, with p's counters, panel and bitmaps, the
// step's record at the device address record of mapped page-locked memory
// (under do).
func (c *prefixCheck) launchCheck(s cu.Stream, p prefixSide, rows int, record cu.DevicePtr) error {
	grid := min(rows, digestBlocksPerSM*c.d.sms)
	cmpTaps := 0
	if c.taps {
		cmpTaps = 1
	}
	return c.d.launchOn(s, "check_steps", grid, 1, digestBlock, ptrArg(p.out), ptrArg(p.tap), arg(rows), arg(c.sh.cols),
		arg(c.sh.dt), arg(c.sh.tapCols), arg(cmpTaps), ptrArg(c.aloneDg), ptrArg(c.aloneTapDg), ptrArg(c.refDg), ptrArg(c.refTapDg),
		arg(c.panel), arg(c.words), ptrArg(p.panel), ptrArg(p.bits), ptrArg(p.ctr), uint64(record))
}

// finishOldest waits for the oldest queued chunk and reads its records.
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
		return fmt.Errorf("%s: %w", prefixesWord(ch.items), err)
	}
	size := c.recordSize()
	for i, v := range ch.items {
		st, err := c.record(v, ch.sl.host[size*i:size*(i+1)])
		if err != nil {
			d.locked(func() { d.dropResult(ch.sl) })
			return fmt.Errorf("%d items: %w", v, err)
		}
		if st != nil {
			c.steps = append(c.steps, *st)
		}
	}
	return nil
}

// record reads the record rec of the step of v items (check_steps): nil
// when no row differs from its row alone.
func (c *prefixCheck) record(v int, rec []byte) (*PrefixStep, error) {
	return readStepRecord(rec, v, v*c.sh.rowsPerItem, c.panel, c.words, c.sh.tapCols > 0)
}

// release waits for the chunks still queued (after an error) and returns
// the check's buffers to the pool.
func (c *prefixCheck) release() {
	for len(c.queued) > 0 {
		c.finishOldest() // an error here follows the one being returned
	}
	c.d.locked(func() {
		for _, p := range c.par {
			c.d.pool.put(p.out, p.tap, p.ctr, p.panel, p.bits)
		}
		c.d.pool.put(c.aloneDg, c.aloneTapDg, c.refDg, c.refTapDg)
	})
}
