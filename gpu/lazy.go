//go:build cuda

package gpu

import (
	"fmt"
	"slices"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/values"
)

// Generates reports whether t makes the values of batches from src on its
// device (target.Generator): cases of generator version 2 without
// explicit data, of the target's own op, every distribution but boundary,
// and boundary for rmsnorm and gemm (nudged on the device, nudge.go; the
// other ops' nudges still run on the host). The token ops (rmsnorm,
// gemm, logprob) make their per-item tensor here and take the shared ones
// (weights, target ids) with the batch; attention makes Q, K and V here
// (genItems), for batches without filler rows.
func (t *Target) Generates(src *target.Source) bool { return generates(t.info.Op, src) }

// generates is Target.Generates for a target of op op: the one place that
// says which lazy batches a device makes the values of (a GPU target's,
// and a held user kernel's: HoldUserKernel).
func generates(op spec.Op, src *target.Source) bool {
	c := src.Case
	k, ok := kernelOf(c.Op)
	_, nudged := nudgerOf(c.Op)
	if !ok || c.Op != op || c.Data != nil || c.GenVersion != 2 || (c.Dist == spec.DistBoundary && !nudged) {
		return false
	}
	known := func(rt target.ItemTensor) bool {
		_, err := values.DistCode(rt.Dist)
		return err == nil
	}
	if k.Token() { // rmsnorm, gemm, logprob
		return src.QKV == nil && known(src.Tensor)
	}
	// attention: Q, K and V
	if len(src.QKV) != 3 || src.Filler != "" {
		return false
	}
	for _, rt := range src.QKV {
		if !known(rt) {
			return false
		}
	}
	return true
}

// genItems fills out with tensor rt of the n items of a lazy attention
// batch from src, packed item after item, cols values a row (under do):
// item it (src.Key(i) for item i) has rows(it) rows; row j of it has the
// key it<<32 | j when positional (K and V, prefill's Q), else the key it
// (decode's Q, one row an item). A run of consecutive items with as many
// rows each is one gen_values launch (RowKeys), so a batch of the case's
// own items in order takes one launch a tensor.
func (d *Device) genItems(out *buffer, src *target.Source, n int, dt oracle.DType, rt target.ItemTensor, cols int, positional bool, rows func(it uint64) int) error {
	t := values.Tensor{Seed: src.Case.Seed, ID: rt.ID, Dist: rt.Dist, DType: dt, Scale: rt.Scale}
	code, err := values.DistCode(rt.Dist)
	if err != nil {
		return err
	}
	size := cols * dsize(dt)
	at := 0 // rows written so far
	for i := 0; i < n; {
		it := src.Key(i)
		L := rows(it)
		j := i + 1
		for j < n && src.Key(j) == it+uint64(j-i) && rows(src.Key(j)) == L {
			j++
		}
		keys := RowKeys{Base: it}
		if positional {
			keys = RowKeys{Base: it << 32, SeqLen: L}
		}
		m := (j - i) * L
		if (at+m)*size > out.cap {
			return fmt.Errorf("gpu: generate %s: %d rows of %d bytes overrun a buffer of %d", tensorName(rt), at+m, size, out.cap)
		}
		dst := &buffer{ptr: out.ptr + cu.DevicePtr(at*size), cap: m * size}
		if err := d.launchGen(dst, t, code, keys, 0, m, cols); err != nil {
			return err
		}
		at += m
		i = j
	}
	return nil
}

// tensorName names an item tensor in errors.
func tensorName(rt target.ItemTensor) string { return fmt.Sprintf("tensor %d (%s)", rt.ID, rt.Dist) }

// itemInput puts the per-item tensor of b (cols values per item) on the
// device (under do) and returns it with the row selection of the output
// rows sel (rows: the caller's selection, nil for all). A batch with
// values is uploaded (host: its values encoded before the call is queued, encoded)
// and selected by rowsel. A lazy batch's tensor
// is rows 0..top of the case's generator (top: its largest item), made by
// gen_values or taken from an earlier run of the same case (generated),
// and output row j reads row Items[sel[j]]; rowOf maps a batch item to
// that row, for per-item side data (log-prob's targets); a filler row
// (target.FillerItem) reads row top+1, which holds the filler's values
// (withFillerRow). A boundary rmsnorm or gemm batch's rows are nudged as
// they are made (nudge, nil for every other batch). The caller puts x back in the
// pool as any input; a kept tensor stays (buffer.kept).
func (d *Device) itemInput(b *target.Batch, host []byte, cols int, rows, sel []int, nudge *rowNudge) (x, rs *buffer, rowOf func(i int) int, err error) {
	if !b.Lazy() {
		if x, err = d.uploadBytes(host); err != nil {
			return nil, nil, nil, err
		}
		if rs, err = d.rowsel(rows, sel); err != nil {
			d.pool.put(x)
			return nil, nil, nil, err
		}
		return x, rs, func(i int) int { return i }, nil
	}
	src := b.Source
	top := b.Items() - 1
	if src.Items != nil {
		top = 0
		for _, it := range src.Items {
			top = max(top, it)
		}
	}
	rt := src.Tensor
	t := values.Tensor{Seed: src.Case.Seed, ID: rt.ID, Dist: rt.Dist, DType: b.In, Scale: rt.Scale}
	code, err := values.DistCode(rt.Dist)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generate %s: %w", b.Op, err)
	}
	if x, err = d.generated(t, code, top+1, cols, nudge); err != nil {
		return nil, nil, nil, err
	}
	rowOf = func(i int) int { return int(src.Key(i)) }
	if src.Filler != "" {
		if x, err = d.withFillerRow(x, top+1, cols, b.In, src.Filler); err != nil {
			return nil, nil, nil, err
		}
		rowOf = func(i int) int {
			if src.Filled(i) {
				return top + 1
			}
			return int(src.Key(i))
		}
	}
	if src.Items == nil {
		rs, err = d.rowsel(rows, sel)
	} else {
		m := make([]int, len(sel))
		for j, r := range sel {
			m[j] = rowOf(r)
		}
		rs, err = d.selection(m)
	}
	if err != nil {
		d.pool.put(x)
		return nil, nil, nil, err
	}
	return x, rs, rowOf, nil
}

// Generated-tensor cache limits: entries and device bytes kept.
const (
	genCacheEntries = 16
	genCacheBytes   = 1 << 30
)

// genEntry is a per-item tensor made on the device: rows 0..rows-1 of t,
// cols values each, nudged when nudge is not zero.
type genEntry struct {
	t          values.Tensor
	nudge      nudgeKey
	rows, cols int
	buf        *buffer
	used       uint64 // clock of the last use
}

// genCache keeps the per-item tensors lately made on the device, so the
// runs of one check (the whole batch, the watched row alone, a sub-batch,
// a permutation: every one a selection of the case's rows) generate the
// case's rows once instead of once a run. Row r of a tensor is a function
// of (t, r) alone, so the first rows of a larger generation are a smaller
// one. Owned by the call running on the device (do).
type genCache struct {
	entries      []*genEntry
	bytes        int
	clock        uint64
	hits, misses int // tests and benchmarks read them
}

// generated returns a device buffer holding at least rows 0..rows-1 of t
// (cols values each, as t.DType's bits), nudged by nudge when it is not
// nil (under do): a kept one, or one filled by gen_values (and nudged:
// nudgeRows) (queued, not waited for) and kept. The buffer is marked
// kept, so the callers' pool.put leaves it to the cache; an entry it
// replaces or evicts goes back to the pool, in stream order after every
// run queued on it.
func (d *Device) generated(t values.Tensor, code, rows, cols int, nudge *rowNudge) (*buffer, error) {
	c := &d.gens
	c.clock++
	var key nudgeKey
	if nudge != nil {
		key = nudge.key
	}
	var old *genEntry
	for _, e := range c.entries {
		if e.t == t && e.cols == cols && e.nudge == key {
			if e.rows >= rows {
				e.used = c.clock
				c.hits++
				return e.buf, nil
			}
			old = e
		}
	}
	c.misses++
	buf, err := d.pool.get(rows * cols * dsize(t.DType))
	if err != nil {
		return nil, err
	}
	if err := d.launchGen(buf, t, code, RowKeys{}, 0, rows, cols); err != nil {
		d.pool.put(buf)
		return nil, err
	}
	if nudge != nil {
		if err := d.nudgeRows(buf, rows, cols, t.DType, nudge); err != nil {
			d.pool.put(buf)
			return nil, err
		}
	}
	if old != nil {
		c.drop(d, old)
	}
	buf.kept = true
	e := &genEntry{t: t, nudge: key, rows: rows, cols: cols, buf: buf, used: c.clock}
	c.entries = append(c.entries, e)
	c.bytes += buf.cap
	for len(c.entries) > 1 && (len(c.entries) > genCacheEntries || c.bytes > genCacheBytes) {
		lru := c.entries[0]
		for _, x := range c.entries[1:] {
			if x.used < lru.used {
				lru = x
			}
		}
		if lru == e {
			break
		}
		c.drop(d, lru)
	}
	return buf, nil
}

// drop removes e from the cache and puts its buffer back in the pool.
func (c *genCache) drop(d *Device, e *genEntry) {
	c.entries = slices.DeleteFunc(c.entries, func(x *genEntry) bool { return x == e })
	c.bytes -= e.buf.cap
	e.buf.kept = false
	d.pool.put(e.buf)
}

// withFillerRow returns a new buffer holding the rows rows of gen (cols
// values of dt each) followed by one filler row of kind filler
// (target.FillerValues), all queued on the stream (under do): a device
// copy of the generated rows and an upload of the filler row.
func (d *Device) withFillerRow(gen *buffer, rows, cols int, dt oracle.DType, filler string) (*buffer, error) {
	v, err := target.FillerValues(filler, dt)
	if err != nil {
		return nil, err
	}
	row := make([]float32, cols)
	for j := range row {
		row[j] = v(j)
	}
	size := cols * dsize(dt)
	x, err := d.pool.get((rows + 1) * size)
	if err != nil {
		return nil, err
	}
	if err := cu.MemcpyDtoDAsync(x.ptr, gen.ptr, int64(rows*size), d.stream); err != nil {
		d.pool.put(x)
		return nil, fmt.Errorf("gpu: copy the generated rows: %w", err)
	}
	f, err := d.upload(dt, row)
	if err != nil {
		d.pool.put(x)
		return nil, err
	}
	defer d.pool.put(f)
	if err := cu.MemcpyDtoDAsync(x.ptr+cu.DevicePtr(rows*size), f.ptr, int64(size), d.stream); err != nil {
		d.pool.put(x)
		return nil, fmt.Errorf("gpu: copy the filler row: %w", err)
	}
	return x, nil
}
