package external

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// ScanVersion is the version of the scan frames (docs/protocol.md,
// "Scans") this build speaks: an adapter that speaks them says so in its
// hello with scan="1".
const ScanVersion = 1

// DigestMul is the multiplier M of RowDigest.
const DigestMul = 0x9E3779B97F4A7C15

// RowDigest is the digest of one output row that an adapter answers a
// step with: for the row's words w_0..w_{n-1} (the unsigned integers of
// its wire bits: 16 bits for BF16 and F16, 32 for F32; taps are F32),
//
//	D = sum over j of (w_j + 1) * M^(j+1)  mod 2^64,  M = DigestMul
//
// Two rows that differ in one word always differ in D (M is odd, so each
// M^(j+1) is, and a word's change is below 2^32). It is the project's one
// row digest: the GPU scans compute it on the device too
// (gpu/kernels/digest.cuh, checked against this function).
func RowDigest(words []uint32) uint64 {
	var d, p uint64 = 0, 1
	for _, w := range words {
		p *= DigestMul
		d += (uint64(w) + 1) * p
	}
	return d
}

// Scans reports whether the adapter speaks the scan frames (its hello says
// scan="1"): Hold and Step work only then.
func (t *Target) Scans() bool { return t.hello["scan"] == strconv.Itoa(ScanVersion) }

// ComparesAlone reports whether the adapter compares steps with the items
// alone on its side (its hello's scan_against lists "alone"): a step then
// answers only the rows that differ from their item alone.
func (t *Target) ComparesAlone() bool {
	return t.Scans() && slices.Contains(strings.Fields(t.hello["scan_against"]), "alone")
}

// heldBatch is what the harness knows of the batch the adapter holds.
type heldBatch struct {
	items, kr, cols int
	dt              oracle.DType
	start           int // t.starts when it was sent: a restart loses it
	b               *target.Batch
	// seqs: b is the sequences of a path scan (HoldSequences), of seqLen
	// tokens, which answer steps of KV cuts only (StepCuts).
	seqs   bool
	seqLen int
	// generated: the adapter made the rows from the draw's recipe (gen.go).
	generated bool
	// alone is what the harness knows of the rows the adapter keeps from
	// the latest step of items each alone; nil before one, and after one
	// failed.
	alone *aloneRows
}

// aloneRows are the digests of the latest step of items each alone, by
// held item: the adapter keeps those rows and compares later steps with
// them (a step with against="alone").
type aloneRows struct {
	at                  []int // at[item]: the item's first row in that step (its first run), -1 when it did not run
	n                   int   // items the step ran
	ident               bool  // it ran items 0..n-1 in order: item i's rows start at i*kr
	tapCols             int
	digests, tapDigests []uint64
}

// newAloneRows records st, the answer to a step of held items ids each
// alone.
func newAloneRows(h *heldBatch, ids []int, st *Step) *aloneRows {
	a := &aloneRows{at: make([]int, h.items), n: len(ids), ident: spec.IsIota(ids), tapCols: st.TapCols,
		digests: st.Digests, tapDigests: st.TapDigests}
	for i := range a.at {
		a.at[i] = -1
	}
	for i, id := range ids {
		if a.at[id] < 0 {
			a.at[id] = i * h.kr
		}
	}
	return a
}

// covers reports whether every item of ids ran in the step of items alone.
func (a *aloneRows) covers(ids []int) bool {
	if a == nil {
		return false
	}
	for _, id := range ids {
		if a.at[id] < 0 {
			return false
		}
	}
	return true
}

// fill writes into d (and td, the taps' digests, when not nil) the
// digests of the rows of a batch of held items ids computed each alone,
// and returns the rows written.
func (a *aloneRows) fill(d, td []uint64, ids []int, kr int) int {
	if a.ident && len(ids) <= a.n && spec.IsIota(ids) {
		n := copy(d, a.digests[:len(ids)*kr])
		if td != nil {
			copy(td, a.tapDigests[:n])
		}
		return n
	}
	r := 0
	for _, id := range ids {
		at := a.at[id]
		copy(d[r:r+kr], a.digests[at:at+kr])
		if td != nil {
			copy(td[r:r+kr], a.tapDigests[at:at+kr])
		}
		r += kr
	}
	return r
}

// Step is an adapter's answer to a step: a digest (RowDigest) of every
// output row of the step's batch and of its taps, and the full bits of the
// rows asked for. When the adapter compared the step with the items alone
// (ComparesAlone), the digests of the rows it did not name are those of
// the same items alone.
type Step struct {
	Rows, Cols int
	Digests    []uint64 // output bits in the output dtype, one a row
	// TapDigests holds the taps' digests when TapCols > 0.
	TapDigests []uint64
	TapCols    int
	// Compared is true when the adapter compared the step with the items
	// alone; Named are then the rows it named as differing from them (their
	// values or their taps), ascending: every other row equals its item
	// alone, bitwise.
	Compared bool
	Named    []int
	// Values and Taps are the fetched rows (positions fetch), widened to
	// fp32, fetched in order.
	Values, Taps []float32
}

// Hold sends batch b to the adapter to keep (a "hold" frame): later Steps
// run on its items. It replaces an earlier held batch. A lazy batch's
// per-item rows travel as their recipe when the adapter makes them
// (Generates, gen.go), else b is materialized and they travel as rows.
func (t *Target) Hold(ctx context.Context, b *target.Batch) error {
	return t.hold(ctx, b, false)
}

// hold sends the hold frame of b: a batch of the adapter's op, or with
// seqs the sequences of a path scan (HoldSequences).
func (t *Target) hold(ctx context.Context, b *target.Batch, seqs bool) error {
	if !t.Scans() {
		return fmt.Errorf("target %s: the adapter does not speak the scan frames (no scan=%d in its hello)", t.info.Name, ScanVersion)
	}
	if err := b.Validate(); err != nil {
		return fmt.Errorf("target %s: %w", t.info.Name, err)
	}
	h := &heldBatch{items: b.Items(), kr: b.RowsPerItem(), cols: b.Cols(), dt: b.OutDType(), b: b, seqs: seqs}
	if seqs {
		p, err := t.sequencesOf(b)
		if err != nil {
			return err
		}
		h.kr, h.seqLen = p.Heads, p.SeqLen // a cut's rows: one position of each sequence, every head
	} else if b.Op != t.op {
		return fmt.Errorf("target %s runs %s, got a %s batch", t.info.Name, t.op, b.Op)
	}
	var rec *recipe // the rows' recipe, when the adapter makes them (gen.go)
	if !seqs && t.Generates() {
		rec = recipeOf(b)
	}
	if rec == nil {
		if err := b.Materialize(); err != nil {
			return fmt.Errorf("target %s: %w", t.info.Name, err)
		}
	}
	err := t.roundTrip(ctx, helloLimit, func(seq int) (*frame, error) {
		req, scratch, err := requestFrame(b, nil, seq, t.scratch[:0])
		t.scratch = scratch
		if err == nil {
			req.meta["frame"] = "hold"
			if seqs {
				req.meta["op"], req.meta["path"] = string(t.op), "sequences"
			}
			if rec != nil {
				rec.apply(req, b.In.String())
			}
		}
		return req, err
	}, func(rep *frame, seq int, name string) error {
		if err := heldReply(rep, seq, name, h.items); err != nil {
			return err
		}
		h.start = t.starts
		h.generated = rec != nil
		return nil
	})
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.held = h
	t.mu.Unlock()
	return nil
}

// heldReply checks rep, the reply named name to the hold frame seq of a
// batch of items items: frame "held", that seq, and that many items.
func heldReply(rep *frame, seq int, name string, items int) error {
	if rep.meta["frame"] != "held" || rep.meta["seq"] != strconv.Itoa(seq) {
		return &frameError{frame: name, field: `field "frame"`, msg: fmt.Sprintf("%q seq %q, want \"held\" seq %d", rep.meta["frame"], rep.meta["seq"], seq)}
	}
	if n := rep.meta["items"]; n != strconv.Itoa(items) {
		return &frameError{frame: name, field: `field "items"`, msg: fmt.Sprintf("%q, the batch has %d", n, items)}
	}
	return nil
}

// holding returns the batch the adapter holds, held again first when the
// adapter restarted since the hold (a crash); an error before any Hold.
// A step of items needs a held batch of the op (seqs false), a step of
// cuts held sequences (seqs true).
func (t *Target) holding(ctx context.Context, seqs bool) (*heldBatch, error) {
	t.mu.Lock()
	h := t.held
	restarted := h != nil && (t.proc == nil || t.starts != h.start)
	t.mu.Unlock()
	switch {
	case h == nil:
		return nil, fmt.Errorf("target %s: step before hold", t.info.Name)
	case h.seqs && !seqs:
		return nil, fmt.Errorf("target %s: a step of items, but the adapter holds the sequences of a path scan", t.info.Name)
	case !h.seqs && seqs:
		return nil, fmt.Errorf("target %s: a step of KV cuts, but the adapter holds a batch of %s, not sequences", t.info.Name, t.op)
	}
	if restarted {
		if err := t.hold(ctx, h.b, h.seqs); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Step runs the adapter on the batch of held items ids (item i of the
// batch is held item ids[i]): as one batch, or with each every item as a
// batch of its own, outputs in order. It returns every output row's
// digest and the full rows at positions fetch (none when nil). A step of
// items each alone is what later steps are compared with: when the
// adapter compares steps with the items alone (ComparesAlone) and every
// item of a later step ran alone, that step's reply names only the rows
// that differ from their item alone, and Step fills in the others'
// digests from the items alone. When the adapter restarted since the hold
// (a crash), the batch is held again first (and the items alone are
// forgotten: later steps answer every digest).
func (t *Target) Step(ctx context.Context, ids []int, each bool, fetch []int) (*Step, error) {
	h, err := t.holding(ctx, false)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if id < 0 || id >= h.items {
			return nil, fmt.Errorf("target %s: item %d outside the %d held", t.info.Name, id, h.items)
		}
	}
	rows := len(ids) * h.kr
	for _, p := range fetch {
		if p < 0 || p >= rows {
			return nil, fmt.Errorf("target %s: fetch row %d outside the step's %d", t.info.Name, p, rows)
		}
	}
	ws := uint64(wireSize(wireDType(h.dt)))
	limit := replySlack + uint64(rows)*24 + uint64(len(fetch))*(uint64(h.cols)*ws+uint64(h.cols+8)*4)
	st := &Step{Rows: rows, Cols: h.cols}
	var against *aloneRows
	err = t.roundTrip(ctx, limit, func(seq int) (*frame, error) {
		f := &frame{meta: map[string]string{"frame": "step", "seq": strconv.Itoa(seq), "each": strconv.FormatBool(each)}}
		if each {
			h.alone = nil // replaced by this step's answer, or gone when it fails
		} else if against = t.againstAlone(h, ids); against != nil {
			f.meta["against"] = "alone"
		}
		f.tensors = append(f.tensors, tensor{name: "items", dtype: wireI64, shape: []int{len(ids)}, data: encodeInt64s(nil, ids)})
		if fetch != nil {
			f.tensors = append(f.tensors, tensor{name: "rows", dtype: wireI64, shape: []int{len(fetch)}, data: encodeInt64s(nil, fetch)})
		}
		return f, nil
	}, func(rep *frame, seq int, name string) error {
		if err := decodeStep(rep, []*Step{st}, h, fetch, seq, name, against, [][]int{ids}); err != nil {
			return err
		}
		if each {
			h.alone = newAloneRows(h, ids, st)
		} else if against != nil {
			t.against++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// StepsAgainstAlone is the number of step batches the adapter answered
// compared with the items alone (a frame of prefixes counts each prefix).
func (t *Target) StepsAgainstAlone() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.against
}

// againstAlone returns the items alone a step of held items ids (not of
// items each alone) is compared with, on the adapter's side: nil unless
// the adapter compares steps with the items alone and every item of ids
// ran in its latest step of items each alone. The one place that decides
// whether a step asks against="alone".
func (t *Target) againstAlone(h *heldBatch, ids []int) *aloneRows {
	if !t.ComparesAlone() || !h.alone.covers(ids) {
		return nil
	}
	return h.alone
}

// StepPrefixes runs the adapter on the prefixes of sizes[k] held items, k
// = 0, 1, ..., in one frame, and returns one Step for each (no rows
// fetched): a scan's consecutive steps at the price of one round trip.
// Compared with the items alone on the adapter's side as Step is.
func (t *Target) StepPrefixes(ctx context.Context, sizes []int) ([]*Step, error) {
	h, err := t.holding(ctx, false)
	if err != nil || len(sizes) == 0 {
		return nil, err
	}
	for _, n := range sizes {
		if n < 1 || n > h.items {
			return nil, fmt.Errorf("target %s: prefix of %d items, the adapter holds %d", t.info.Name, n, h.items)
		}
	}
	out := make([]*Step, len(sizes))
	batches := make([][]int, len(sizes))
	ident := spec.Iota(slices.Max(sizes))
	for k, n := range sizes {
		out[k] = &Step{Rows: n * h.kr, Cols: h.cols}
		batches[k] = ident[:n]
	}
	against := func() *aloneRows { return t.againstAlone(h, ident) }
	return t.stepsFrame(ctx, h, out, batches, against, tensor{name: "sizes", dtype: wireI64, shape: []int{len(sizes)}, data: encodeInt64s(nil, sizes)})
}

// stepsFrame sends one step frame of several batches (the steps out,
// made of the held batch h's items batches[k], nil for the cuts of a
// path scan) carrying tensors, asks against="alone" when against returns
// the items alone the batches are compared with (nil: not compared), and
// decodes the reply's steps into out.
func (t *Target) stepsFrame(ctx context.Context, h *heldBatch, out []*Step, batches [][]int, against func() *aloneRows, tensors ...tensor) ([]*Step, error) {
	var alone *aloneRows
	err := t.roundTrip(ctx, replySlack+uint64(rowsOf(out))*24, func(seq int) (*frame, error) {
		f := &frame{meta: map[string]string{"frame": "step", "seq": strconv.Itoa(seq), "each": "false"}}
		if alone = against(); alone != nil {
			f.meta["against"] = "alone"
		}
		f.tensors = append(f.tensors, tensors...)
		return f, nil
	}, func(rep *frame, seq int, name string) error {
		if err := decodeStep(rep, out, h, nil, seq, name, alone, batches); err != nil {
			return err
		}
		if alone != nil {
			t.against += len(out)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Frames is the number of frames sent to the adapter's current process
// (its hello is frame 0): what a scan's round trips cost.
func (t *Target) Frames() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seq
}

// BatchesVersion is the version of the several-batch step frame
// (docs/protocol.md, "batches") this build speaks: an adapter that takes
// it says so in its hello with scan_batches="1".
const BatchesVersion = 1

// StepsBatches reports whether the adapter takes a step of several
// batches in one frame (its hello's scan_batches): StepBatches works only
// then.
func (t *Target) StepsBatches() bool {
	return t.Scans() && t.hello["scan_batches"] == strconv.Itoa(BatchesVersion)
}

// StepBatches runs the adapter on batches[k] (held item ids, each a
// batch, in order) in one frame and returns one Step for each (no rows
// fetched): a prefix travels as its length, any other batch as its ids
// (the "batches" tensor). Compared with the items alone on the adapter's
// side as Step is, when every item of every batch ran alone.
func (t *Target) StepBatches(ctx context.Context, batches [][]int) ([]*Step, error) {
	if !t.StepsBatches() {
		return nil, fmt.Errorf("target %s: the adapter takes no step of several batches (no scan_batches=%d in its hello)", t.info.Name, BatchesVersion)
	}
	h, err := t.holding(ctx, false)
	if err != nil || len(batches) == 0 {
		return nil, err
	}
	out := make([]*Step, len(batches))
	kinds := make([]int, 0, 2*len(batches))
	var ids []int // the gathered batches' ids, one after another
	for k, b := range batches {
		if len(b) == 0 {
			return nil, fmt.Errorf("target %s: batch %d of a step has no items", t.info.Name, k)
		}
		for _, id := range b {
			if id < 0 || id >= h.items {
				return nil, fmt.Errorf("target %s: item %d outside the %d held", t.info.Name, id, h.items)
			}
		}
		if spec.IsIota(b) {
			kinds = append(kinds, 0, len(b))
		} else {
			kinds = append(kinds, 1, len(b))
			ids = append(ids, b...)
		}
		out[k] = &Step{Rows: len(b) * h.kr, Cols: h.cols}
	}
	against := func() *aloneRows {
		if a := t.againstAlone(h, nil); a != nil && allCovered(a, batches) {
			return a
		}
		return nil
	}
	return t.stepsFrame(ctx, h, out, batches, against,
		tensor{name: "items", dtype: wireI64, shape: []int{len(ids)}, data: encodeInt64s(nil, ids)},
		tensor{name: "batches", dtype: wireI64, shape: []int{len(batches), 2}, data: encodeInt64s(nil, kinds)})
}

// allCovered reports whether every item of every batch ran in the step
// of items alone a.
func allCovered(a *aloneRows, batches [][]int) bool {
	for _, b := range batches {
		if !a.covers(b) {
			return false
		}
	}
	return true
}

// decodeStep checks a step's reply and fills steps, one for each batch of
// the step (batches[k]: its held items; the batches' rows one after
// another in the reply): frame "reply", the seq, "tap_cols"; every row's
// digests (decodeDigests, or decodeAgainst when the step was compared with
// the items alone a); and with fetch (a step of one batch) "y"
// [len(fetch), cols] in the output dtype and "taps" F32 [len(fetch),
// tap_cols], whose rows must digest to the step's digests.
func decodeStep(rep *frame, steps []*Step, h *heldBatch, fetch []int, seq int, name string, a *aloneRows, batches [][]int) error {
	bad := frameErrorf(name)
	if err := checkReply(rep, seq, name); err != nil {
		return err
	}
	tc, err := strconv.Atoi(rep.meta["tap_cols"])
	if err != nil || tc < 0 || tc > h.cols+8 {
		return bad(`field "tap_cols"`, "%q, want 0..%d", rep.meta["tap_cols"], h.cols+8)
	}
	for _, st := range steps {
		st.TapCols = tc
	}
	if a != nil {
		err = decodeAgainst(rep, steps, a, batches, h.kr, name)
	} else {
		err = decodeDigests(rep, steps, name)
	}
	if err != nil || fetch == nil {
		return err
	}
	st := steps[0]
	y, ok := rep.tensor("y")
	if !ok {
		return bad(`tensor "y"`, "missing")
	}
	if want := wireDType(h.dt); y.dtype != want || !slices.Equal(y.shape, []int{len(fetch), st.Cols}) {
		return bad(`tensor "y"`, "%s [%d %d] expected, got %s %v", want, len(fetch), st.Cols, y.dtype, y.shape)
	}
	ws := wireSize(y.dtype)
	for i, p := range fetch {
		if got := RowDigest(wireWords(y.data[i*st.Cols*ws:(i+1)*st.Cols*ws], ws)); got != st.Digests[p] {
			return bad(`tensor "y"`, "row %d digests to %016x, the step's digest is %016x", p, got, st.Digests[p])
		}
	}
	st.Values = make([]float32, len(fetch)*st.Cols)
	if err := decodeFloats(st.Values, y); err != nil {
		return bad(`tensor "y"`, "%v", err)
	}
	if tc > 0 {
		tp, ok := rep.tensor("taps")
		if !ok || tp.dtype != wireF32 || !slices.Equal(tp.shape, []int{len(fetch), tc}) {
			return bad(`tensor "taps"`, "F32 [%d %d] expected", len(fetch), tc)
		}
		for i, p := range fetch {
			if got := RowDigest(wireWords(tp.data[i*tc*4:(i+1)*tc*4], 4)); got != st.TapDigests[p] {
				return bad(`tensor "taps"`, "row %d digests to %016x, the step's digest is %016x", p, got, st.TapDigests[p])
			}
		}
		st.Taps = decodeFloat32s(tp)
	}
	return nil
}

// rowsOf is the rows of steps together.
func rowsOf(steps []*Step) int {
	n := 0
	for _, st := range steps {
		n += st.Rows
	}
	return n
}

// decodeDigests reads the reply's "digests" I64 [rows, 2]: every row's
// digest, and its taps' when tap_cols > 0, the steps' rows one after
// another.
func decodeDigests(rep *frame, steps []*Step, name string) error {
	rows, tc := rowsOf(steps), steps[0].TapCols
	d, ok := rep.tensor("digests")
	if !ok {
		return &frameError{frame: name, field: `tensor "digests"`, msg: "missing"}
	}
	if d.dtype != wireI64 || !slices.Equal(d.shape, []int{rows, 2}) {
		return &frameError{frame: name, field: `tensor "digests"`, msg: fmt.Sprintf("I64 [%d 2] expected, got %s %v", rows, d.dtype, d.shape)}
	}
	all := make([]uint64, rows)
	var taps []uint64
	if tc > 0 {
		taps = make([]uint64, rows)
	}
	for r := range rows {
		all[r] = binary.LittleEndian.Uint64(d.data[16*r:])
		if tc > 0 {
			taps[r] = binary.LittleEndian.Uint64(d.data[16*r+8:])
		}
	}
	at := 0
	for _, st := range steps {
		st.Digests = all[at : at+st.Rows : at+st.Rows]
		if tc > 0 {
			st.TapDigests = taps[at : at+st.Rows : at+st.Rows]
		}
		at += st.Rows
	}
	return nil
}

// decodeAgainst reads the reply to a step compared with the items alone
// a: "differ" I64 [k], the rows whose bits (or taps' bits) differ from
// their item alone, strictly ascending, and "digests" I64 [k, 2], theirs.
// Every other row is its item alone: its digests are a's. A reply whose
// taps are not as wide as the items alone's must name every row. A step
// of a prefix with no row named shares a's digests (Digests are read
// only).
func decodeAgainst(rep *frame, steps []*Step, a *aloneRows, batches [][]int, kr int, name string) error {
	bad := frameErrorf(name)
	rows, tc := rowsOf(steps), steps[0].TapCols
	p, ok := rep.tensor("differ")
	if !ok {
		return bad(`tensor "differ"`, "missing (the step asked against=\"alone\")")
	}
	if p.dtype != wireI64 || len(p.shape) != 1 || p.shape[0] > rows {
		return bad(`tensor "differ"`, "I64 [k <= %d] expected, got %s %v", rows, p.dtype, p.shape)
	}
	k := p.shape[0]
	d, ok := rep.tensor("digests")
	if !ok {
		return bad(`tensor "digests"`, "missing")
	}
	if d.dtype != wireI64 || !slices.Equal(d.shape, []int{k, 2}) {
		return bad(`tensor "digests"`, "I64 [%d 2] expected (one a row named in \"differ\"), got %s %v", k, d.dtype, d.shape)
	}
	if tc != a.tapCols && k != rows {
		return bad(`tensor "differ"`, "%d rows of %d named, but the taps are %d wide and %d alone: every row differs", k, rows, tc, a.tapCols)
	}
	named := make([]int, k)
	for i := range named {
		named[i] = int(int64(binary.LittleEndian.Uint64(p.data[8*i:])))
		if named[i] < 0 || named[i] >= rows {
			return bad(`tensor "differ"`, "row %d outside the step's %d rows", named[i], rows)
		}
		if i > 0 && named[i] <= named[i-1] {
			return bad(`tensor "differ"`, "row %d after row %d: want rows strictly ascending", named[i], named[i-1])
		}
	}
	at, i := 0, 0 // the step's first row, its first named row
	for b, st := range steps {
		j := i
		for j < k && named[j] < at+st.Rows {
			j++
		}
		ids := batches[b]
		st.Compared = true
		for _, r := range named[i:j] {
			st.Named = append(st.Named, r-at)
		}
		if j == i && a.ident && len(ids) <= a.n && spec.IsIota(ids) {
			st.Digests = a.digests[:st.Rows:st.Rows]
			if tc > 0 {
				st.TapDigests = a.tapDigests[:st.Rows:st.Rows]
			}
		} else {
			st.Digests = make([]uint64, st.Rows)
			var td []uint64
			if tc > 0 {
				st.TapDigests = make([]uint64, st.Rows)
				if tc == a.tapCols {
					td = st.TapDigests
				}
			}
			a.fill(st.Digests, td, ids, kr)
			for ; i < j; i++ {
				r := named[i] - at
				st.Digests[r] = binary.LittleEndian.Uint64(d.data[16*i:])
				if tc > 0 {
					st.TapDigests[r] = binary.LittleEndian.Uint64(d.data[16*i+8:])
				}
			}
		}
		i = j
		at += st.Rows
	}
	return nil
}

// wireWords returns the little-endian words of size ws (2 or 4 bytes) of
// data.
func wireWords(data []byte, ws int) []uint32 {
	w := make([]uint32, len(data)/ws)
	for i := range w {
		if ws == 2 {
			w[i] = uint32(binary.LittleEndian.Uint16(data[2*i:]))
		} else {
			w[i] = binary.LittleEndian.Uint32(data[4*i:])
		}
	}
	return w
}
