package scan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// plan returns, for value v of the dimension, the held items of the batch
// (item i of the batch is item ids[i] of the held batch) and the batch
// positions (items) compared:
//
//	items     ids 0..v-1, all compared
//	pad       ids 0..v-1 of the real items followed by zero filler, the
//	          first Real compared
//	position  ids 0..To-1 with the watched item and item v swapped, all
//	          compared
func (sc *scanner) plan(v int) (ids, cmp []int) {
	s := sc.s
	if len(sc.ident) < s.To {
		sc.ident = spec.Iota(s.To) // shared, never written
	}
	switch s.Dim {
	case spec.ScanPad:
		return sc.ident[:v], sc.ident[:s.Real]
	case spec.ScanPosition:
		ids = spec.Iota(s.To)
		ids[v], ids[s.Watch] = ids[s.Watch], ids[v]
		return ids, sc.ident[:s.To]
	}
	return sc.ident[:v], sc.ident[:v]
}

// refItems is the number of items of the reference batch (held items
// 0..n-1 in order): the largest batch, the real items unpadded, the
// batch with the watched item in its own place.
func (sc *scanner) refItems() int {
	if sc.s.Dim == spec.ScanPad {
		return sc.s.Real
	}
	return sc.s.To
}

// draw scans every value on draw k and returns each value's class.
func (sc *scanner) draw(ctx context.Context, k int) ([]string, error) {
	switch sc.s.Dim {
	case spec.ScanKV:
		return sc.drawKV(ctx, k)
	case spec.ScanNeighbour, spec.ScanChunk, spec.ScanPage, spec.ScanPrefix:
		return sc.drawAttn(ctx, k)
	}
	b, h, err := sc.holdDraw(k)
	if err != nil {
		return nil, err
	}
	sc.makeAhead(k + 1) // while this draw runs
	if sc.cov != nil {
		sc.batch = b // addPower reads its rows when they are on the host
	}
	defer h.release()
	if err := sc.warm(ctx, k, h); err != nil {
		return nil, err
	}
	sc.res.Resident = h.resident()
	n, kr := sc.refItems(), b.RowsPerItem()
	sc.before(k, "items alone (1..%d)", n)
	alone, err := h.alone(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("scan: draw %s, items alone: %w", sc.draws[k], err)
	}
	defer alone.Release()
	sc.before(k, "the reference batch, %s = %d", mapDim(sc.s), sc.refValue())
	ref, err := h.run(ctx, spec.Iota(n))
	if err != nil {
		return nil, fmt.Errorf("scan: draw %s, the reference batch: %w", sc.draws[k], err)
	}
	defer ref.Release()
	sc.res.Batches += int64(n + 1)
	all := rowsOf(spec.Iota(n), kr)
	d, err := differing(ref, alone, all, all, sc.dt, sc.s.NoTaps)
	if err != nil {
		return nil, fmt.Errorf("scan: draw %s, the reference batch against its items alone: %w", sc.draws[k], err)
	}
	sc.res.RowsCompared += int64(len(all))
	if len(d) > 0 {
		sc.res.Differing += int64(len(d))
		sc.res.Diffs = append(sc.res.Diffs, Diff{Draw: sc.draws[k], Value: sc.refValue(), Rows: len(d), FirstRow: all[d[0]], Against: "item alone"})
	}
	st := &steps{sc: sc, ctx: ctx, h: h, k: k, kr: kr, alone: alone, ref: ref, refMoved: itemsAt(all, d, kr),
		cls: make([]string, len(sc.values))}
	refRows := make([]int, len(d))
	for i, x := range d {
		refRows[i] = all[x]
	}
	st.bulk = st.newBulk(refRows)
	// inFlight steps queued: step v+inFlight-1 is queued on the device
	// before step v is waited for and classified, so the device never
	// waits for the host between steps.
	var queue []*step
	dropAll := func() {
		for _, q := range queue {
			st.drop(q)
		}
	}
	// finishOldest classifies the oldest queued step (finish releases it);
	// on an error it drops the others.
	finishOldest := func() error {
		p := queue[0]
		queue = queue[1:]
		if err := st.finish(p); err != nil {
			dropAll()
			return err
		}
		return nil
	}
	for i, v := range sc.values {
		if err := ctx.Err(); err != nil {
			dropAll()
			return nil, fmt.Errorf("scan: %s = %d: %w", sc.s.Dim, v, err)
		}
		p, err := st.start(i, v)
		if err != nil {
			dropAll()
			return nil, fmt.Errorf("scan: draw %s, %s = %d: %w", sc.draws[k], sc.s.Dim, v, err)
		}
		queue = append(queue, p)
		if len(queue) == inFlight {
			if err := finishOldest(); err != nil {
				return nil, err
			}
		}
	}
	for len(queue) > 0 {
		if err := finishOldest(); err != nil {
			return nil, err
		}
	}
	return st.cls, nil
}

// warm has the target of h prepare, once, on the first draw of a scan of
// the items dimension, for every batch size the draws run: 1 (the items
// alone), each value (its step and, below the panel, its further
// batches) and the reference batch.
func (sc *scanner) warm(ctx context.Context, k int, h held) error {
	w, ok := h.(warmer)
	if !ok || k > 0 || sc.s.Dim != spec.ScanItems {
		return nil
	}
	sizes := append([]int{1, sc.refItems()}, sc.values...)
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	if err := w.warm(ctx, sizes); err != nil {
		return fmt.Errorf("scan: draw %s, prepare the target for %d batch sizes: %w", sc.draws[k], len(sizes), err)
	}
	return nil
}

// holdDraw makes draw k's largest batch and holds it where the target
// computes: made there from the case when a case holder takes it (a
// scan of the items dimension), else made on the host (padded for the
// pad dimension) and held by hold.
func (sc *scanner) holdDraw(k int) (*target.Batch, held, error) {
	c := sc.caseFor(k)
	pre, err := sc.madeAhead(k, c)
	if err != nil {
		return nil, nil, fmt.Errorf("scan: draw %s: %w", sc.draws[k], err)
	}
	var b *target.Batch
	if sc.s.Dim == spec.ScanItems {
		for _, f := range caseHolders {
			h, made, err := f(sc.t, c, pre)
			if err != nil {
				return nil, nil, fmt.Errorf("scan: draw %s, hold the batch: %w", sc.draws[k], err)
			}
			if h != nil {
				return made, h, nil
			}
			if made != nil {
				b = made
				break
			}
		}
	}
	if b == nil {
		b = pre
	}
	if b == nil {
		if b, err = inputs.Of(c); err != nil {
			return nil, nil, fmt.Errorf("scan: draw %s: %w", sc.draws[k], err)
		}
	}
	if sc.s.Dim == spec.ScanPad {
		var err error
		if b, err = inputs.Pad(b, sc.s.To, "zeros"); err != nil {
			return nil, nil, fmt.Errorf("scan: %w", err)
		}
	}
	h, err := hold(sc.t, b)
	if err != nil {
		return nil, nil, fmt.Errorf("scan: hold the batch: %w", err)
	}
	return b, h, nil
}

// inFlight is how many steps a draw keeps queued on the device.
const inFlight = 4

// steps runs the steps of one draw.
type steps struct {
	sc         *scanner
	ctx        context.Context
	h          held
	k, kr      int
	alone, ref *target.Output
	refMoved   map[int]bool // items of the reference batch that differ from themselves alone
	cls        []string
	bulk       *bulk // the bulk check of the prefix steps (bulk.go), or nil
}

// step is one value's batch, run, with its compare against the items
// alone queued; or a value the bulk check passed or flagged (nothing run
// here: bulk.go).
type step struct {
	i, v   int
	passed bool        // the bulk check passed v: nothing is queued
	found  *prefixStep // what the bulk check found on v, which it flagged: nothing is queued
	o      *target.Output
	ids    []int
	items  []int // the held item of each compared position
	pa, pb []int // compared rows of o, and the same items' rows in alone and ref
	waitA  func() ([]int, error)
}

// start runs the batch of value v and queues its compare with the items
// alone.
func (st *steps) start(i, v int) (*step, error) {
	sc, kr := st.sc, st.kr
	bulk, found, err := st.checked(v)
	if err != nil {
		return nil, err
	}
	if bulk {
		return &step{i: i, v: v, passed: found == nil, found: found}, nil
	}
	ids, cmp := sc.plan(v)
	sc.before(st.k, "%s = %d", mapDim(sc.s), v)
	o, err := st.h.run(st.ctx, ids)
	if err != nil {
		return nil, err
	}
	items := cmp // ids[p] == p but in a position scan
	if sc.s.Dim == spec.ScanPosition {
		items = make([]int, len(cmp))
		for j, p := range cmp {
			items[j] = ids[p]
		}
	}
	p := &step{i: i, v: v, o: o, ids: ids, items: items, pa: rowsOf(cmp, kr), pb: rowsOf(items, kr)}
	p.waitA = startDiffering(o, st.alone, p.pa, p.pb, sc.dt, sc.s.NoTaps)
	return p, nil
}

// drop waits for a started step's compare and releases its output.
func (st *steps) drop(p *step) {
	if p != nil && p.o != nil {
		p.waitA()
		p.o.Release()
	}
}

// finish waits for step p's compare with the items alone, compares it
// with the reference batch where that can differ, records what differs
// and classifies the value.
func (st *steps) finish(p *step) error {
	switch {
	case p.passed:
		st.cls[p.i] = st.pass(p)
		st.sc.step()
		return nil
	case p.found != nil:
		st.cls[p.i] = st.settle(p)
		st.sc.step()
		return nil
	}
	defer p.o.Release()
	c, err := st.compare(p)
	if errors.Is(err, errNondeterministic) {
		c, err = st.nondeterministic(p, err), nil
	}
	if err != nil {
		return fmt.Errorf("scan: draw %s, %s = %d: %w", st.sc.draws[st.k], st.sc.s.Dim, p.v, err)
	}
	st.cls[p.i] = c
	st.sc.step()
	return nil
}

// refValue is the value of the dimension the reference batch has.
func (sc *scanner) refValue() int {
	switch sc.s.Dim {
	case spec.ScanPad:
		return sc.s.Real
	case spec.ScanPosition:
		return sc.s.Watch
	}
	return sc.s.To
}

// compare compares step p's rows with the same items alone (queued by
// start) and in the reference batch, records what differs and returns the
// class of p.v; a step with a row that differs from its item alone runs
// again, and one answered two ways is nondeterministic (determinism.go). The compare with the
// reference batch runs only where it
// can find something: a row equal to its item alone whose item is equal
// to itself alone in the reference batch too is equal to it there
// (bitwise equality is transitive).
func (st *steps) compare(p *step) (string, error) {
	sc, kr, o, v := st.sc, st.kr, p.o, p.v
	dA, err := p.waitA()
	if err != nil {
		return "", fmt.Errorf("against the items alone: %w", err)
	}
	sc.res.Batches++
	sc.res.RowsCompared += int64(len(p.pa))
	var dR []int
	if len(dA) > 0 || anyOf(st.refMoved, p.items) {
		if dR, err = differing(o, st.ref, p.pa, p.pb, sc.dt, sc.s.NoTaps); err != nil {
			return "", fmt.Errorf("against the reference batch: %w", err)
		}
		sc.res.RowsCompared += int64(len(p.pa))
	}
	if len(dA) > 0 {
		if err := st.sameTwice(p); err != nil {
			return "", err
		}
	}
	sc.record(st.k, v, p.pa, dA, "item alone")
	sc.record(st.k, v, p.pa, dR, "largest batch")
	sc.res.Differing += int64(len(union(dA, dR)))
	switch sc.s.Dim {
	case spec.ScanPosition:
		// every item is in every batch: the class says whether any
		// differs from its place in the reference batch.
		if len(dR) == 0 {
			return "A", nil
		}
		d, err := witness(o, v*kr, (v+1)*kr)
		return "B:" + d, err
	case spec.ScanPad:
		bits, err := panel(o, sc.s.Real, kr, itemsAt(p.pa, dA, kr))
		return strings.Join(bits, " "), err
	}
	moved := itemsAt(p.pa, dA, kr)
	sc.noteMoved(v, moved)
	return sc.itemsClass(st.ctx, st.h, v, o, kr, st.alone, moved)
}

// anyOf reports whether any of items is in set.
func anyOf(set map[int]bool, items []int) bool {
	if len(set) == 0 {
		return false
	}
	for _, it := range items {
		if set[it] {
			return true
		}
	}
	return false
}

// PanelItems is the number of items whose bits name a value's class in a
// scan of the items dimension (fewer when the range is shorter).
const PanelItems = 64

// itemsClass is the class of v in a scan of the items dimension: the bits
// of panel items 0..P-1 (P = min(To, PanelItems)) computed in batches of v
// items (the step's batch, then for v < P further batches of v items
// until every panel item ran), each written "=" when equal to the item
// alone, else as the digest of its bits; and, when every panel item
// equals itself alone, "+tail" when a row past the panel differs from its
// item alone (a fault of some positions only). The panel part is a function of the
// schedule the target chooses for v items only, so the classes of several
// draws refine each other without splitting a schedule's values; 64
// witnesses show a reduction-order change that one row shows only near a
// rounding boundary.
//
// The further batches are all run, and their compares with the items
// alone queued, before the first compare is waited for: on a device the
// host waits once a value, not once a batch.
func (sc *scanner) itemsClass(ctx context.Context, h held, v int, o *target.Output, kr int, alone *target.Output, moved map[int]bool) (string, error) {
	p := min(sc.s.To, PanelItems)
	bits := make([]string, 0, p)
	step, err := panel(o, min(v, p), kr, moved)
	if err != nil {
		return "", err
	}
	bits = append(bits, step...)
	var runs []*panelRun
	defer func() {
		for _, r := range runs {
			r.drop()
		}
	}()
	for _, ids := range panelBatches(v, sc.s.To) {
		x, err := h.run(ctx, ids)
		if err != nil {
			return "", err
		}
		n := min(v, p-ids[0])
		rows := rowsOf(spec.Iota(n), kr)
		runs = append(runs, &panelRun{x: x, n: n, rows: rows,
			wait: startDiffering(x, alone, rows, rowsOf(ids[:n], kr), sc.dt, sc.s.NoTaps)})
	}
	for _, r := range runs {
		d, err := r.wait()
		r.wait = nil
		if err == nil {
			step, err = panel(r.x, r.n, kr, itemsAt(r.rows, d, kr))
		}
		r.drop()
		if err != nil {
			return "", err
		}
		bits = append(bits, step...)
		sc.res.Batches++
	}
	return withTail(strings.Join(bits, " "), p, moved), nil
}

// panelRun is one further batch of itemsClass: its output x, whose first
// n items are panel items (rows rows), and the wait for their compare
// with the items alone (nil once waited for; x is nil once released).
type panelRun struct {
	x    *target.Output
	n    int
	rows []int
	wait func() ([]int, error)
}

// drop waits for r's compare if nobody did and releases its output, once.
func (r *panelRun) drop() {
	if r.wait != nil {
		r.wait()
		r.wait = nil
	}
	if r.x != nil {
		r.x.Release()
		r.x = nil
	}
}

// withTail is the class of panel bits class (p items), with " +tail"
// when every panel item equals itself alone and an item past the panel
// is in moved (differs from itself alone).
func withTail(class string, p int, moved map[int]bool) string {
	if class != allEqual(p) {
		return class
	}
	for it := range moved {
		if it >= p {
			return class + " +tail"
		}
	}
	return class
}

// panel returns the bits of items 0..n-1 of o: "=" for an item equal to
// itself alone (not in moved), else the digest of its rows (all fetched
// at once from a device).
func panel(o *target.Output, n, kr int, moved map[int]bool) ([]string, error) {
	bits := make([]string, n)
	var items, pos []int
	for it := range n {
		bits[it] = "="
		if moved[it] {
			items = append(items, it)
			pos = append(pos, rowsOf([]int{it}, kr)...)
		}
	}
	if len(items) == 0 {
		return bits, nil
	}
	ds, err := witnesses(o, pos, kr)
	if err != nil {
		return nil, err
	}
	for i, it := range items {
		bits[it] = ds[i]
	}
	return bits, nil
}

// itemsAt returns the items (positions / kr) of the rows rows[i] for i in
// idx.
func itemsAt(rows, idx []int, kr int) map[int]bool {
	m := make(map[int]bool, len(idx))
	for _, i := range idx {
		m[rows[i]/kr] = true
	}
	return m
}

// record records the rows rows[i], i in d (ascending), of value v on
// draw k that differ from what against names.
func (sc *scanner) record(k, v int, rows, d []int, against string) {
	if len(d) > 0 {
		sc.res.Diffs = append(sc.res.Diffs, Diff{Draw: sc.draws[k], Value: v, Rows: len(d), FirstRow: rows[d[0]], Against: against})
	}
}

// recordRows records the rows rows (ascending) of value v on draw k
// that differ from what against names.
func (sc *scanner) recordRows(k, v int, rows []int, against string) {
	if len(rows) > 0 {
		sc.res.Diffs = append(sc.res.Diffs, Diff{Draw: sc.draws[k], Value: v, Rows: len(rows), FirstRow: rows[0], Against: against})
	}
}

// drawKV scans the KV length on draw k: every request's cache cut to its
// first v tokens, the target against the oracle of its declared schedule
// on every row. A value's class is "A" when every row is bitwise equal,
// "B" when one differs.
func (sc *scanner) drawKV(ctx context.Context, k int) ([]string, error) {
	b, err := inputs.Of(sc.caseFor(k))
	if err != nil {
		return nil, fmt.Errorf("scan: draw %s: %w", sc.draws[k], err)
	}
	or, err := target.OracleFor(sc.t)
	if err != nil {
		return nil, fmt.Errorf("scan: the kv dimension compares with the oracle: %w", err)
	}
	cls := make([]string, len(sc.values))
	for i, v := range sc.values {
		g := cutKV(b, v)
		o, err := runChecked(ctx, sc.t, g)
		if err != nil {
			return nil, fmt.Errorf("scan: draw %s, kv = %d: %w", sc.draws[k], v, err)
		}
		want, err := runChecked(ctx, or, g)
		if err != nil {
			o.Release()
			return nil, fmt.Errorf("scan: draw %s, kv = %d, oracle: %w", sc.draws[k], v, err)
		}
		all := spec.Iota(g.Rows())
		d, err := differing(o, want, all, all, sc.dt, sc.s.NoTaps)
		o.Release()
		if err != nil {
			return nil, fmt.Errorf("scan: draw %s, kv = %d: %w", sc.draws[k], v, err)
		}
		sc.res.Batches++
		sc.res.RowsCompared += int64(len(all))
		sc.res.Differing += int64(len(d))
		sc.record(k, v, all, d, "oracle")
		cls[i] = "A"
		if len(d) > 0 {
			cls[i] = "B"
		}
		sc.step()
	}
	return cls, nil
}

// cutKV returns decode batch b with every request's KV cache cut to its
// first v tokens (b's caches hold at least v).
func cutKV(b *target.Batch, v int) *target.Batch {
	src := b.Input.(*oracle.DecodeInput)
	d := *src
	w := d.KVHeads * d.HeadDim
	d.K = make([][]float32, len(src.K))
	d.V = make([][]float32, len(src.V))
	for r := range d.K {
		d.K[r] = src.K[r][:v*w]
		d.V[r] = src.V[r][:v*w]
	}
	return &target.Batch{Op: b.Op, In: b.In, Out: b.Out, Input: &d}
}

// union merges two ascending index lists.
func union(a, b []int) []int {
	seen := make(map[int]bool, len(a)+len(b))
	var u []int
	for _, x := range append(append([]int(nil), a...), b...) {
		if !seen[x] {
			seen[x] = true
			u = append(u, x)
		}
	}
	return u
}
