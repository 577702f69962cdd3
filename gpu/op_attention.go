//go:build cuda

package gpu

import (
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// prefillKernel is op attn_prefill on the device: kernel prefill
// (kernels/attention.cu), writing its taps when wantTaps is set.
type prefillKernel struct{ attention.Prefill }

// decodeKernel is op attn_decode on the device: kernels decode_split and
// decode_combine (kernels/attention.cu), writing taps when wantTaps is set.
type decodeKernel struct{ attention.Decode }

// blockFor is the block size of the attention kernels: thread d owns
// output column d.
func blockFor(D int) int {
	b := (D + 31) / 32 * 32
	return max(b, 32)
}

// attnTaps is the taps buffer of an attention launch of n rows of D
// columns: the fp32 outputs before rounding, as the oracle targets give
// them (target.RunOracle: TapCols = Cols, none for fp32 outputs), so a
// path or parity relation compares what the CPU twin compares. It is nil
// (the kernels' null pointer: no taps written) when the output dtype is
// fp32 or the caller wants none (under do).
func (d *Device) attnTaps(o *target.Output, n, D int, outDT oracle.DType, want bool) (*buffer, error) {
	if !want || outDT == oracle.FP32 {
		return nil, nil
	}
	taps, err := d.tapsCols(o, n, D)
	if err != nil {
		return nil, err
	}
	return taps.buf, nil
}

func attnCheck(heads, kvHeads, headDim int) error {
	if heads < 1 || kvHeads < 1 || headDim < 1 || heads%kvHeads != 0 {
		return fmt.Errorf("heads %d kv heads %d head dim %d: %w", heads, kvHeads, headDim, oracle.ErrShape)
	}
	if headDim > 1024 {
		return fmt.Errorf("head dim %d above the kernels' 1024: %w", headDim, oracle.ErrShape)
	}
	return nil
}

// attnArgs is opArgs of an attention launch (I: oracle.PrefillInput or
// oracle.DecodeInput) whose heads the kernels take (attnCheck).
func attnArgs[I oracle.PrefillInput | oracle.DecodeInput](b *target.Batch, sched oracle.Schedule) (*I, oracle.AttentionSchedule, error) {
	in, s, err := opArgs[I, oracle.AttentionSchedule](b, sched)
	if err != nil {
		return nil, s, err
	}
	switch x := any(in).(type) {
	case *oracle.PrefillInput:
		err = attnCheck(x.Heads, x.KVHeads, x.HeadDim)
	case *oracle.DecodeInput:
		err = attnCheck(x.Heads, x.KVHeads, x.HeadDim)
	}
	if err != nil {
		return nil, s, err
	}
	return in, s, nil
}

// attnOut is the rest an attention launch of the n = len(sel) selected
// rows needs on the device (under do): the rows' selection (rowsel; nil
// for all rows in order), out's buffer of n rows of headDim values of
// outDT, and the taps (attnTaps).
func (d *Device) attnOut(rows, sel []int, o *target.Output, out *devOut, headDim int, outDT oracle.DType, wantTaps bool) (rs, taps *buffer, err error) {
	n := len(sel)
	if rs, err = d.rowsel(rows, sel); err != nil {
		return nil, nil, err
	}
	if out.buf, err = d.pool.get(n * headDim * dsize(outDT)); err != nil {
		return rs, nil, err
	}
	taps, err = d.attnTaps(o, n, headDim, outDT, wantTaps)
	return rs, taps, err
}

// attnInputs puts Q, K and V of an attention batch on the device (under
// do): a lazy batch's made there (lazyAttn), any other's uploaded from host
// bytes encoded before the call is queued (uploadAttn). The caller puts
// the buffers back in the pool, on an error too (those not taken are nil).
type attnInputs func() (q, k, v *buffer, err error)

// lazyAttn returns the attnInputs of lazy batch b: q of qRows(it) rows a
// item, qCols wide (positional for prefill), k and v kvRows(it) rows a
// item of kvCols.
func (d *Device) lazyAttn(b *target.Batch, dt oracle.DType, qCols, kvCols, qTotal, kvTotal int, qPositional bool, qRows, kvRows func(it uint64) int) attnInputs {
	src, n := b.Source, b.Items()
	return func() (q, k, v *buffer, err error) {
		sz := dsize(dt)
		if q, err = d.pool.get(qTotal * qCols * sz); err != nil {
			return
		}
		if k, err = d.pool.get(kvTotal * kvCols * sz); err != nil {
			return
		}
		if v, err = d.pool.get(kvTotal * kvCols * sz); err != nil {
			return
		}
		if err = d.genItems(q, src, n, dt, src.QKV[0], qCols, qPositional, qRows); err != nil {
			return
		}
		if err = d.genItems(k, src, n, dt, src.QKV[1], kvCols, true, kvRows); err != nil {
			return
		}
		err = d.genItems(v, src, n, dt, src.QKV[2], kvCols, true, kvRows)
		return
	}
}

// uploadAttn returns the attnInputs that upload qb, kb and vb (host
// bytes from encoded or hostBuf).
func (d *Device) uploadAttn(qb, kb, vb []byte) attnInputs {
	return func() (q, k, v *buffer, err error) {
		if q, err = d.uploadBytes(qb); err != nil {
			putHost(kb)
			putHost(vb)
			return
		}
		if k, err = d.uploadBytes(kb); err != nil {
			putHost(vb)
			return
		}
		v, err = d.uploadBytes(vb)
		return
	}
}

func (prefillKernel) launch(d *Device, b *target.Batch, sched oracle.Schedule, rows, sel []int, o *target.Output, out *devOut, wantTaps bool) (func() error, error) {
	in, s, err := attnArgs[oracle.PrefillInput](b, sched)
	if err != nil {
		return nil, err
	}
	dt := b.In
	if in.Seqs < 0 || in.SeqLen < 1 {
		return nil, fmt.Errorf("seqs %d seq len %d: %w", in.Seqs, in.SeqLen, oracle.ErrShape)
	}
	D, H, KH := in.HeadDim, in.Heads, in.KVHeads
	tokens := in.Seqs * in.SeqLen
	var inputs attnInputs
	if b.Lazy() {
		L := func(uint64) int { return in.SeqLen }
		inputs = d.lazyAttn(b, dt, H*D, KH*D, tokens, tokens, true, L, L)
	} else {
		kvn := tokens * KH * D
		if err := ops.FirstErr(need("q", len(in.Q), tokens*H*D), need("k", len(in.K), kvn), need("v", len(in.V), kvn)); err != nil {
			return nil, err
		}
		inputs = d.uploadAttn(encoded(dt, in.Q), encoded(dt, in.K), encoded(dt, in.V))
	}
	return func() error {
		n := len(sel)
		q, k, v, err := inputs()
		var rs *buffer
		defer func() { d.pool.put(q, k, v, rs) }()
		if err != nil {
			return err
		}
		var taps *buffer
		if rs, taps, err = d.attnOut(rows, sel, o, out, D, in.Out, wantTaps); err != nil {
			return err
		}
		return d.prefillOn(q, k, v, rs, n, in, s, dt, out.buf, taps)
	}, nil
}

// prefillOn queues kernel prefill on the n selected rows rs (nil: rows
// 0..n-1) of prefill batch in (its sizes; q, k and v packed on the
// device, of dtype dt), writing out and taps (nil: none) (under do; not
// waited for).
func (d *Device) prefillOn(q, k, v, rs *buffer, n int, in *oracle.PrefillInput, s oracle.AttentionSchedule, dt oracle.DType, out, taps *buffer) error {
	D := in.HeadDim
	return d.launch("prefill", n, 1, blockFor(D), ptrArg(q), ptrArg(k), ptrArg(v), ptrArg(out), ptrArg(taps), ptrArg(rs),
		arg(in.SeqLen), arg(in.Heads), arg(in.KVHeads), arg(D), arg(s.Tile), arg(dt), arg(in.Out))
}

func (decodeKernel) launch(d *Device, b *target.Batch, sched oracle.Schedule, rows, sel []int, o *target.Output, out *devOut, wantTaps bool) (func() error, error) {
	in, s, err := attnArgs[oracle.DecodeInput](b, sched)
	if err != nil {
		return nil, err
	}
	dt := b.In
	B, D, H, KH := len(in.K), in.HeadDim, in.Heads, in.KVHeads
	var kvLen func(it uint64) int
	if b.Lazy() {
		kvLen = func(it uint64) int { return b.Source.Case.Shape.KVLen(int(it)) }
	}
	off, lens, total, err := packedCaches(b, in, kvLen)
	if err != nil {
		return nil, err
	}
	var inputs attnInputs
	if kvLen != nil {
		inputs = d.lazyAttn(b, dt, H*D, KH*D, B, total, false, func(uint64) int { return 1 }, kvLen)
	} else {
		if err := need("q", len(in.Q), B*H*D); err != nil {
			return nil, err
		}
		// the caches packed request after request, encoded before the call is queued
		pack := func(cache [][]float32) []byte {
			sz := dsize(dt)
			host := hostBuf(total * KH * D * sz)
			for r, c := range cache {
				encode(host[off[r]*KH*D*sz:], dt, c)
			}
			return host
		}
		inputs = d.uploadAttn(encoded(dt, in.Q), pack(in.K), pack(in.V))
	}
	return func() error {
		n := len(sel)
		q, k, v, err := inputs()
		var ko, kl, rs *buffer
		defer func() { d.pool.put(q, k, v, ko, kl, rs) }()
		if err != nil {
			return err
		}
		if ko, err = d.uploadInts(off, false); err != nil {
			return err
		}
		if kl, err = d.uploadInts(lens, false); err != nil {
			return err
		}
		var taps *buffer
		if rs, taps, err = d.attnOut(rows, sel, o, out, D, in.Out, wantTaps); err != nil {
			return err
		}
		return d.decodeOn(q, k, v, ko, kl, rs, n, in, s, dt, out.buf, taps)
	}, nil
}

// packedCaches lays out decode batch b's caches (input in) packed request
// after request: request r's lens[r] tokens from token off[r], total
// tokens in all. kvLen, when set, gives an item's KV length (a lazy
// batch: no caches on the host); else the caches' sizes do.
func packedCaches(b *target.Batch, in *oracle.DecodeInput, kvLen func(it uint64) int) (off, lens []int, total int, err error) {
	B, width := len(in.K), in.KVHeads*in.HeadDim
	if len(in.V) != B {
		return nil, nil, 0, fmt.Errorf("%d key caches but %d value caches: %w", B, len(in.V), oracle.ErrShape)
	}
	off, lens = make([]int, B), make([]int, B)
	for r := range in.K {
		if kvLen != nil {
			lens[r] = kvLen(b.Source.Key(r))
		} else {
			if len(in.K[r])%width != 0 || len(in.V[r]) != len(in.K[r]) {
				return nil, nil, 0, fmt.Errorf("request %d cache sizes k %d v %d not a multiple of kv heads x head dim %d: %w",
					r, len(in.K[r]), len(in.V[r]), width, oracle.ErrShape)
			}
			lens[r] = len(in.K[r]) / width
		}
		if lens[r] < 1 {
			return nil, nil, 0, fmt.Errorf("request %d has %d cached tokens: %w", r, lens[r], oracle.ErrShape)
		}
		off[r] = total
		total += lens[r]
	}
	return off, lens, total, nil
}

// decodeOn queues decode_split and decode_combine on the n selected rows
// rs (nil: rows 0..n-1) of decode batch in (its sizes; q and the packed
// caches on the device, of dtype dt; ko and kl each request's cache
// offset and length), writing out and taps (nil: none); the partials'
// scratch goes back to the pool in stream order (under do; not waited
// for).
func (d *Device) decodeOn(q, k, v, ko, kl, rs *buffer, n int, in *oracle.DecodeInput, s oracle.AttentionSchedule, dt oracle.DType, out, taps *buffer) error {
	H, KH, D := in.Heads, in.KVHeads, in.HeadDim
	part, err := d.pool.get(4 * n * s.Splits * (D + 2))
	if err != nil {
		return err
	}
	defer d.pool.put(part)
	if err := d.launch("decode_split", n, s.Splits, blockFor(D), ptrArg(q), ptrArg(k), ptrArg(v), ptrArg(ko), ptrArg(kl),
		ptrArg(part), ptrArg(rs), arg(H), arg(KH), arg(D), arg(s.Tile), arg(s.Splits), arg(dt)); err != nil {
		return err
	}
	return d.launch("decode_combine", n, 1, blockFor(D), ptrArg(kl), ptrArg(part), ptrArg(out), ptrArg(taps), ptrArg(rs),
		arg(H), arg(D), arg(s.Tile), arg(s.Splits), arg(in.Out))
}
