package external

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/spec"
)

// OpScanVersion is the version of the scan frames of the op packages'
// ops (docs/protocol.md, "Scans of the op packages' ops") this build
// speaks: an adapter of such an op that holds a scan's batch says so in
// its hello with scan_ops="1".
const OpScanVersion = 1

// OpRowDigest is the digest D (RowDigest) of row r of an op package's
// output o: its words are the row's elements, column after column in
// o's column order and in order within a column, each one word: the 32
// bits of an int32 or fp32 element as an unsigned integer, the byte of a
// uint8 element. It is what an adapter answers a step of the op with.
func OpRowDigest(o *ops.Output, r int) uint64 {
	n := 0
	for _, c := range o.Columns {
		n += c.Width
	}
	w := make([]uint32, 0, n)
	for c, col := range o.Columns {
		row := o.Row(c, r)
		if col.Elem == ops.Uint8 {
			for _, b := range row {
				w = append(w, uint32(b))
			}
			continue
		}
		for i := 0; i < len(row); i += 4 {
			w = append(w, binary.LittleEndian.Uint32(row[i:]))
		}
	}
	return RowDigest(w)
}

// Holds reports whether the adapter holds a scan's batch of its op (its
// hello says scan_ops="1"): Hold and the steps work only then.
func (o *OpTarget) Holds() bool { return o.t.hello["scan_ops"] == strconv.Itoa(OpScanVersion) }

// comparesAlone reports whether the adapter compares steps with the
// items alone on its side (Holds, and its hello's scan_against lists
// "alone").
func (o *OpTarget) comparesAlone() bool {
	return o.Holds() && slices.Contains(strings.Fields(o.t.hello["scan_against"]), "alone")
}

// opHeld is what the harness knows of the batch of an op the adapter
// holds: heldBatch's items (one output row each), the process it was
// sent to and the items alone, and the batch itself, sent again after a
// restart.
type opHeld struct {
	heldBatch
	in   ops.Input
	cols []ops.Column
}

// OpStep is an adapter's answer to one batch of a step of an op package's
// op: the digest (OpRowDigest) of every output row, and the rows fetched
// in full, in the order asked.
type OpStep struct {
	Digests []uint64
	Fetched *ops.Output // nil when no row was fetched
}

// Hold sends in to the adapter to keep (a "hold" frame: the op's request
// tensors, ops.WireOp.Wire): later steps run on its items. It replaces
// an earlier held batch.
func (o *OpTarget) Hold(ctx context.Context, in ops.Input) error {
	if !o.Holds() {
		return fmt.Errorf("target %s: the adapter holds no scan of %s (no scan_ops=%d in its hello)", o.Name(), o.op.Record().Name, OpScanVersion)
	}
	b, err := o.op.Wire(in)
	if err != nil {
		return fmt.Errorf("target %s: %w", o.Name(), err)
	}
	cols, err := o.op.Columns(b.Shape)
	if err != nil {
		return fmt.Errorf("target %s: %w", o.Name(), err)
	}
	h := &opHeld{heldBatch: heldBatch{items: b.Items, kr: 1}, in: in, cols: cols}
	t := o.t
	err = t.roundTrip(ctx, helloLimit, func(seq int) (*frame, error) {
		req, scratch, err := opRequestFrame(o.op.Record().Name, b, seq, t.scratch[:0])
		t.scratch = scratch
		if err == nil {
			req.meta["frame"] = "hold"
		}
		return req, err
	}, func(rep *frame, seq int, name string) error {
		if err := heldReply(rep, seq, name, h.items); err != nil {
			return err
		}
		h.start = t.starts
		return nil
	})
	if err != nil {
		return err
	}
	t.mu.Lock()
	o.held = h
	t.mu.Unlock()
	return nil
}

// holding returns the held batch, held again first when the adapter
// restarted since the hold (a crash, which loses the items alone); an
// error before any Hold.
func (o *OpTarget) holding(ctx context.Context) (*opHeld, error) {
	t := o.t
	t.mu.Lock()
	h := o.held
	restarted := h != nil && (t.proc == nil || t.starts != h.start)
	t.mu.Unlock()
	if h == nil {
		return nil, fmt.Errorf("target %s: step before hold", o.Name())
	}
	if restarted {
		if err := o.Hold(ctx, h.in); err != nil {
			return nil, err
		}
		t.mu.Lock()
		h = o.held
		t.mu.Unlock()
	}
	return h, nil
}

// Step runs the adapter on the held items: batches[k] is one batch of
// held item ids, or with each every id of batches[0] (the only batch) a
// batch of its own. It returns one OpStep a batch (each: one for all,
// the items' rows in order) with every row's digest and, with fetch (one
// batch), the rows at positions fetch in full. A step of items each
// alone is what later steps are compared with: when the adapter compares
// with the items alone (its hello's scan_against) and every item of a
// later step ran alone, the reply names only the rows that differ from
// their item alone, and Step fills in the others' digests. The frame
// sends prefixes as their sizes ("sizes"), a single batch as its ids
// ("items"), and any other batches as ids and kinds ("batches"). A reply
// whose fetched row does not digest to the digest it gives is refused
// with an error naming the reply frame and tensor.
func (o *OpTarget) Step(ctx context.Context, batches [][]int, each bool, fetch []int) ([]*OpStep, error) {
	h, err := o.holding(ctx)
	if err != nil {
		return nil, err
	}
	if len(batches) == 0 || each && len(batches) != 1 || fetch != nil && len(batches) != 1 {
		return nil, fmt.Errorf("target %s: a step of %d batches (each %v, fetch %v): want one batch with each or fetch", o.Name(), len(batches), each, fetch != nil)
	}
	steps := make([]*Step, len(batches))
	rows := 0
	prefixes := !each && fetch == nil
	for k, b := range batches {
		if len(b) == 0 {
			return nil, fmt.Errorf("target %s: batch %d of a step has no items", o.Name(), k)
		}
		for _, id := range b {
			if id < 0 || id >= h.items {
				return nil, fmt.Errorf("target %s: item %d outside the %d held", o.Name(), id, h.items)
			}
		}
		prefixes = prefixes && spec.IsIota(b)
		steps[k] = &Step{Rows: len(b)}
		rows += len(b)
	}
	for _, p := range fetch {
		if p < 0 || p >= rows {
			return nil, fmt.Errorf("target %s: fetch row %d outside the step's %d", o.Name(), p, rows)
		}
	}
	f := &frame{meta: map[string]string{"frame": "step", "each": strconv.FormatBool(each)}}
	switch {
	case prefixes && len(batches) > 1:
		sizes := make([]int, len(batches))
		for k, b := range batches {
			sizes[k] = len(b)
		}
		f.tensors = append(f.tensors, tensor{name: "sizes", dtype: wireI64, shape: []int{len(sizes)}, data: encodeInt64s(nil, sizes)})
	case len(batches) == 1:
		f.tensors = append(f.tensors, tensor{name: "items", dtype: wireI64, shape: []int{rows}, data: encodeInt64s(nil, batches[0])})
	default:
		var ids, kinds []int
		for _, b := range batches {
			if spec.IsIota(b) {
				kinds = append(kinds, 0, len(b))
			} else {
				kinds = append(kinds, 1, len(b))
				ids = append(ids, b...)
			}
		}
		f.tensors = append(f.tensors,
			tensor{name: "items", dtype: wireI64, shape: []int{len(ids)}, data: encodeInt64s(nil, ids)},
			tensor{name: "batches", dtype: wireI64, shape: []int{len(batches), 2}, data: encodeInt64s(nil, kinds)})
	}
	if fetch != nil {
		f.tensors = append(f.tensors, tensor{name: "rows", dtype: wireI64, shape: []int{len(fetch)}, data: encodeInt64s(nil, fetch)})
	}
	limit := opReplyLimit(h.cols, len(fetch)) + uint64(rows)*24
	var against *aloneRows
	var fetched *ops.Output
	t := o.t
	err = t.roundTrip(ctx, limit, func(seq int) (*frame, error) {
		f.meta["seq"] = strconv.Itoa(seq)
		delete(f.meta, "against")
		against = nil
		if each {
			h.alone = nil // replaced by this step's answer, or gone when it fails
		} else if o.comparesAlone() && allCovered(h.alone, batches) {
			against = h.alone
			f.meta["against"] = "alone"
		}
		return f, nil
	}, func(rep *frame, seq int, name string) error {
		if err := checkReply(rep, seq, name); err != nil {
			return err
		}
		if tc := rep.meta["tap_cols"]; tc != "" && tc != "0" {
			return &frameError{frame: name, field: `field "tap_cols"`, msg: fmt.Sprintf("%q: an op package's op has no taps", tc)}
		}
		if against != nil {
			err = decodeAgainst(rep, steps, against, batches, 1, name)
		} else {
			err = decodeDigests(rep, steps, name)
		}
		if err != nil {
			return err
		}
		if fetch != nil {
			if fetched, err = decodeFetched(rep, h.cols, fetch, steps[0].Digests, seq, name); err != nil {
				return err
			}
		}
		if each {
			h.alone = newAloneRows(&h.heldBatch, batches[0], steps[0])
		} else if against != nil {
			t.against += len(batches)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*OpStep, len(steps))
	for k, st := range steps {
		out[k] = &OpStep{Digests: st.Digests}
	}
	out[0].Fetched = fetched
	return out, nil
}

// decodeFetched reads the rows fetch of a step's reply, one tensor a
// column as a request's reply has them (decodeOpReply), [len(fetch),
// width], and checks that row i digests (OpRowDigest) to digests[fetch[i]],
// the reply's digest of that row.
func decodeFetched(rep *frame, cols []ops.Column, fetch []int, digests []uint64, seq int, name string) (*ops.Output, error) {
	out, err := decodeOpReply(rep, cols, len(fetch), seq, name)
	if err != nil {
		return nil, err
	}
	for i, p := range fetch {
		if got := OpRowDigest(out, i); got != digests[p] {
			names := make([]string, len(cols))
			for c, col := range cols {
				names[c] = strconv.Quote(col.Name)
			}
			return nil, &frameError{frame: name, field: "tensors " + strings.Join(names, ", "),
				msg: fmt.Sprintf("row %d digests to %016x, the step's digest of it is %016x", p, got, digests[p])}
		}
	}
	return out, nil
}
