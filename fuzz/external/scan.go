package external

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/bitparity/bitparity/oracle"
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

// heldBatch is what the harness knows of the batch the adapter holds.
type heldBatch struct {
	items, kr, cols int
	dt              oracle.DType
	start           int // t.starts when it was sent: a restart loses it
	b               *target.Batch
}

// Step is an adapter's answer to a step: a digest (RowDigest) of every
// output row of the step's batch and of its taps, and the full bits of the
// rows asked for.
type Step struct {
	Rows, Cols int
	Digests    []uint64 // output bits in the output dtype, one a row
	// TapDigests holds the taps' digests when TapCols > 0.
	TapDigests []uint64
	TapCols    int
	// Values and Taps are the fetched rows (positions fetch), widened to
	// fp32, fetched in order.
	Values, Taps []float32
}

// Hold sends batch b to the adapter to keep (a "hold" frame): later Steps
// run on its items. It replaces an earlier held batch.
func (t *Target) Hold(ctx context.Context, b *target.Batch) error {
	if !t.Scans() {
		return fmt.Errorf("target %s: the adapter does not speak the scan frames (no scan=%d in its hello)", t.info.Name, ScanVersion)
	}
	if err := b.Validate(); err != nil {
		return fmt.Errorf("target %s: %w", t.info.Name, err)
	}
	if b.Op != t.op {
		return fmt.Errorf("target %s runs %s, got a %s batch", t.info.Name, t.op, b.Op)
	}
	h := &heldBatch{items: b.Items(), kr: b.RowsPerItem(), cols: b.Cols(), dt: b.OutDType(), b: b}
	err := t.roundTrip(ctx, helloLimit, func(seq int) (*frame, error) {
		req, scratch, err := requestFrame(b, nil, seq, t.scratch[:0])
		t.scratch = scratch
		if err == nil {
			req.meta["frame"] = "hold"
		}
		return req, err
	}, func(rep *frame, seq int, name string) error {
		if rep.meta["frame"] != "held" || rep.meta["seq"] != strconv.Itoa(seq) {
			return &frameError{frame: name, field: `field "frame"`, msg: fmt.Sprintf("%q seq %q, want \"held\" seq %d", rep.meta["frame"], rep.meta["seq"], seq)}
		}
		if n := rep.meta["items"]; n != strconv.Itoa(h.items) {
			return &frameError{frame: name, field: `field "items"`, msg: fmt.Sprintf("%q, the batch has %d", n, h.items)}
		}
		h.start = t.starts
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

// holding returns the batch the adapter holds, held again first when the
// adapter restarted since the hold (a crash); an error before any Hold.
func (t *Target) holding(ctx context.Context) (*heldBatch, error) {
	t.mu.Lock()
	h := t.held
	restarted := h != nil && (t.proc == nil || t.starts != h.start)
	t.mu.Unlock()
	if h == nil {
		return nil, fmt.Errorf("target %s: step before hold", t.info.Name)
	}
	if restarted {
		if err := t.Hold(ctx, h.b); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Step runs the adapter on the batch of held items ids (item i of the
// batch is held item ids[i]): as one batch, or with each every item as a
// batch of its own, outputs in order. It returns every output row's
// digest and the full rows at positions fetch (none when nil). When the
// adapter restarted since the hold (a crash), the batch is held again
// first.
func (t *Target) Step(ctx context.Context, ids []int, each bool, fetch []int) (*Step, error) {
	h, err := t.holding(ctx)
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
	limit := replySlack + uint64(rows)*16 + uint64(len(fetch))*(uint64(h.cols)*ws+uint64(h.cols+8)*4)
	st := &Step{Rows: rows, Cols: h.cols}
	err = t.roundTrip(ctx, limit, func(seq int) (*frame, error) {
		f := &frame{meta: map[string]string{"frame": "step", "seq": strconv.Itoa(seq), "each": strconv.FormatBool(each)}}
		f.tensors = append(f.tensors, tensor{name: "items", dtype: wireI64, shape: []int{len(ids)}, data: encodeInt64s(nil, ids)})
		if fetch != nil {
			f.tensors = append(f.tensors, tensor{name: "rows", dtype: wireI64, shape: []int{len(fetch)}, data: encodeInt64s(nil, fetch)})
		}
		return f, nil
	}, func(rep *frame, seq int, name string) error {
		return decodeStep(rep, st, h, fetch, seq, name)
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// StepPrefixes runs the adapter on the prefixes of sizes[k] held items, k
// = 0, 1, ..., in one frame, and returns one Step for each (no rows
// fetched): a scan's consecutive steps at the price of one round trip.
func (t *Target) StepPrefixes(ctx context.Context, sizes []int) ([]*Step, error) {
	h, err := t.holding(ctx)
	if err != nil {
		return nil, err
	}
	rows := 0
	for _, n := range sizes {
		if n < 1 || n > h.items {
			return nil, fmt.Errorf("target %s: prefix of %d items, the adapter holds %d", t.info.Name, n, h.items)
		}
		rows += n * h.kr
	}
	all := &Step{Rows: rows, Cols: h.cols}
	err = t.roundTrip(ctx, replySlack+uint64(rows)*16, func(seq int) (*frame, error) {
		f := &frame{meta: map[string]string{"frame": "step", "seq": strconv.Itoa(seq), "each": "false"}}
		f.tensors = append(f.tensors, tensor{name: "sizes", dtype: wireI64, shape: []int{len(sizes)}, data: encodeInt64s(nil, sizes)})
		return f, nil
	}, func(rep *frame, seq int, name string) error {
		return decodeStep(rep, all, h, nil, seq, name)
	})
	if err != nil {
		return nil, err
	}
	out := make([]*Step, len(sizes))
	at := 0
	for k, n := range sizes {
		r := n * h.kr
		st := &Step{Rows: r, Cols: h.cols, TapCols: all.TapCols, Digests: all.Digests[at : at+r : at+r]}
		if all.TapDigests != nil {
			st.TapDigests = all.TapDigests[at : at+r : at+r]
		}
		out[k] = st
		at += r
	}
	return out, nil
}

// decodeStep checks a step's reply and fills st: frame "reply", the seq,
// "digests" I64 [rows, 2], "tap_cols", and with fetch "y" [len(fetch),
// cols] in the output dtype and "taps" F32 [len(fetch), tap_cols] whose
// digests must be the ones sent for those rows.
func decodeStep(rep *frame, st *Step, h *heldBatch, fetch []int, seq int, name string) error {
	bad := func(field, format string, a ...any) error {
		return &frameError{frame: name, field: field, msg: fmt.Sprintf(format, a...)}
	}
	if k := rep.meta["frame"]; k != "reply" {
		return bad(`field "frame"`, "%q, want \"reply\"", k)
	}
	if s := rep.meta["seq"]; s != strconv.Itoa(seq) {
		return bad(`field "seq"`, "%q, want %d (the request's)", s, seq)
	}
	tc, err := strconv.Atoi(rep.meta["tap_cols"])
	if err != nil || tc < 0 || tc > st.Cols+8 {
		return bad(`field "tap_cols"`, "%q, want 0..%d", rep.meta["tap_cols"], st.Cols+8)
	}
	st.TapCols = tc
	d, ok := rep.tensor("digests")
	if !ok {
		return bad(`tensor "digests"`, "missing")
	}
	if d.dtype != wireI64 || !slices.Equal(d.shape, []int{st.Rows, 2}) {
		return bad(`tensor "digests"`, "I64 [%d 2] expected, got %s %v", st.Rows, d.dtype, d.shape)
	}
	st.Digests = make([]uint64, st.Rows)
	if tc > 0 {
		st.TapDigests = make([]uint64, st.Rows)
	}
	for r := range st.Rows {
		st.Digests[r] = binary.LittleEndian.Uint64(d.data[16*r:])
		if tc > 0 {
			st.TapDigests[r] = binary.LittleEndian.Uint64(d.data[16*r+8:])
		}
	}
	if fetch == nil {
		return nil
	}
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
			return bad(`tensor "y"`, "row %d digests to %016x, the reply's digest is %016x", p, got, st.Digests[p])
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
				return bad(`tensor "taps"`, "row %d digests to %016x, the reply's digest is %016x", p, got, st.TapDigests[p])
			}
		}
		st.Taps = decodeFloat32s(tp)
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
