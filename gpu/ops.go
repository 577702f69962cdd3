//go:build cuda

package gpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// upload copies vals as dt bits to a pooled buffer (under do).
func (d *Device) upload(dt oracle.DType, vals []float32) (*buffer, error) {
	host, err := d.stageUpload(len(vals) * dsize(dt))
	if err != nil {
		return nil, err
	}
	encode(host, dt, vals)
	return d.toDevice(host)
}

// uploadInts copies vals as int64 (or int32 when narrow) to the device.
func (d *Device) uploadInts(vals []int, narrow bool) (*buffer, error) {
	size := 8
	if narrow {
		size = 4
	}
	host, err := d.stageUpload(size * len(vals))
	if err != nil {
		return nil, err
	}
	if narrow {
		for i, v := range vals {
			binary.LittleEndian.PutUint32(host[4*i:], uint32(int32(v)))
		}
		return d.toDevice(host)
	}
	for i, v := range vals {
		binary.LittleEndian.PutUint64(host[8*i:], uint64(int64(v)))
	}
	return d.toDevice(host)
}

// needItems is need for a batch's per-item tensor, which a lazy batch
// leaves to the device (itemInput).
func needItems(b *target.Batch, name string, got, want int) error {
	if b.Lazy() {
		return nil
	}
	return need(name, got, want)
}

func need(name string, got, want int) error {
	if got != want {
		return fmt.Errorf("%s has %d values, want %d: %w", name, got, want, oracle.ErrShape)
	}
	return nil
}

// blockFor is the block size of the attention kernels: thread d owns
// output column d.
func blockFor(D int) int {
	b := (D + 31) / 32 * 32
	return max(b, 32)
}

// Run computes the selected rows of b (all when rows is nil) with schedule
// s (the oracle schedule type of b.Op) on the device. The output stays on
// the device (Output.Device), and so do the fp32 taps, the oracle targets'
// taps bit for bit (target.RunOracle; Output.DeviceTaps): RMSNorm's sum of
// squares and rstd, log-prob's row max and sum of exponentials, and
// attention's fp32 outputs before rounding (TapCols = Cols; none when the
// output dtype is fp32). Run uploads the inputs and launches the kernels
// without waiting for them: the first copy back to the host (a compare's
// summary, a Fetch) waits and reports a kernel's failure.
func (d *Device) Run(b *target.Batch, s oracle.Schedule, rows []int) (*target.Output, error) {
	return d.run(b, s, rows, true)
}

// run is Run; with attnTaps false the attention kernels get a null taps
// pointer and write no taps (a caller that only reads the values, such as
// TransformerOps). RMSNorm and log-prob write their two taps a row either
// way.
func (d *Device) run(b *target.Batch, s oracle.Schedule, rows []int, attnTaps bool) (*target.Output, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	sel, err := oracle.SelectRows(rows, b.Rows())
	if err != nil {
		return nil, fmt.Errorf("gpu %s: %w", b.Op, err)
	}
	o := &target.Output{Rows: sel, Cols: b.Cols(), DType: b.OutDType()}
	out := newDevOut(d, len(sel), o.Cols, o.DType)
	var run func() error
	switch b.Op {
	case spec.OpRMSNorm:
		var sch oracle.RMSNormSchedule
		if sch, err = scheduleOf[oracle.RMSNormSchedule](s); err == nil {
			run, err = d.rmsnorm(b, b.Input.(*oracle.RMSNormInput), b.In, sch, rows, sel, o, out)
		}
	case spec.OpGEMM:
		var sch oracle.GEMMSchedule
		if sch, err = scheduleOf[oracle.GEMMSchedule](s); err == nil {
			run, err = d.gemm(b, b.Input.(*oracle.GEMMInput), b.In, sch, rows, sel, out)
		}
	case spec.OpLogProb:
		var sch oracle.LogProbSchedule
		if sch, err = scheduleOf[oracle.LogProbSchedule](s); err == nil {
			run, err = d.logprob(b, b.Input.(*oracle.LogProbInput), b.In, sch, rows, sel, o, out)
		}
	case spec.OpAttnPrefill:
		var sch oracle.AttentionSchedule
		if sch, err = scheduleOf[oracle.AttentionSchedule](s); err == nil {
			run, err = d.prefill(b, b.Input.(*oracle.PrefillInput), b.In, sch, rows, sel, o, out, attnTaps)
		}
	case spec.OpAttnDecode:
		var sch oracle.AttentionSchedule
		if sch, err = scheduleOf[oracle.AttentionSchedule](s); err == nil {
			run, err = d.decode(b, b.Input.(*oracle.DecodeInput), b.In, sch, rows, sel, o, out, attnTaps)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("gpu %s: %w", b.Op, err)
	}
	o.Device = out
	if err := d.do(run); err != nil {
		o.Release()
		return nil, fmt.Errorf("gpu %s: %w", b.Op, err)
	}
	return o, nil
}

// scheduleOf asserts that s is the schedule type S of the batch's op.
func scheduleOf[S oracle.Schedule](s oracle.Schedule) (S, error) {
	sch, ok := s.(S)
	if !ok {
		return sch, fmt.Errorf("schedule %T, want %T", s, sch)
	}
	return sch, nil
}

// rowsel uploads the selected rows, or returns nil (all rows in order).
func (d *Device) rowsel(rows, sel []int) (*buffer, error) {
	if rows == nil {
		return nil, nil
	}
	return d.selection(sel)
}

// weightedInput puts the shared weights of a token batch (wb, encoded) and
// its per-item tensor on the device (under do): itemInput's x and rs, the
// rows nudged with those weights when nudge is not nil (a lazy boundary
// batch). On an error nothing is left taken from the pool.
func (d *Device) weightedInput(b *target.Batch, xb, wb []byte, cols int, rows, sel []int, nudge *rowNudge) (x, w, rs *buffer, err error) {
	if w, err = d.uploadShared(wb); err != nil {
		return nil, nil, nil, err
	}
	if nudge != nil {
		nudge.w = w
	}
	if x, rs, _, err = d.itemInput(b, xb, cols, rows, sel, nudge); err != nil {
		d.pool.put(w)
		return nil, nil, nil, err
	}
	return x, w, rs, nil
}

// selection puts a row selection (int64 per output row) on the device
// (under do): the device's identity list when it reads rows 0, 1, ... in
// order, else an upload.
func (d *Device) selection(sel []int) (*buffer, error) {
	if isIdentity(sel) {
		return d.identity(len(sel))
	}
	return d.uploadInts(sel, false)
}

func (d *Device) rmsnorm(b *target.Batch, in *oracle.RMSNormInput, dt oracle.DType, s oracle.RMSNormSchedule, rows, sel []int, o *target.Output, out *devOut) (func() error, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if in.Rows < 0 || in.Hidden < 1 {
		return nil, fmt.Errorf("rows %d hidden %d: %w", in.Rows, in.Hidden, oracle.ErrShape)
	}
	if err := firstErr(needItems(b, "x", len(in.X), in.Rows*in.Hidden), need("w", len(in.W), in.Hidden)); err != nil {
		return nil, err
	}
	xb, wb := encoded(dt, in.X), encoded(dt, in.W)
	nudge := newRMSNormNudge(b, in, dt, wb)
	return func() error {
		n := len(sel)
		x, w, rs, err := d.weightedInput(b, xb, wb, in.Hidden, rows, sel, nudge)
		if err != nil {
			return err
		}
		defer d.pool.put(x, w, rs)
		return d.rmsnormOn(x, w, rs, n, in.Hidden, dt, in.Out, in.Eps, s, o, out)
	}, nil
}

// rmsnormOn launches the rmsnorm kernel on inputs already on the device
// (x: the batch, w: the weights, rs: the selected rows or nil for n rows in
// order) into a new buffer of out, with its fp32 taps [sum of squares,
// rstd] in a device output of two columns (o.DeviceTaps). It does not wait:
// the next copy to the host (a compare's summary) does (under do).
func (d *Device) rmsnormOn(x, w, rs *buffer, n, hidden int, dt, outDT oracle.DType, eps float32, s oracle.RMSNormSchedule, o *target.Output, out *devOut) error {
	var err error
	if out.buf, err = d.pool.get(n * hidden * dsize(outDT)); err != nil {
		return err
	}
	taps, err := d.tapsOut(o, n)
	if err != nil {
		return err
	}
	r := s.Reduce
	return d.launch("rmsnorm", n, 1, r.Threads, ptrArg(x), ptrArg(w), ptrArg(out.buf), ptrArg(taps.buf), ptrArg(rs),
		arg(hidden), arg(dt), arg(outDT), arg(math.Float32bits(eps)), arg(r.Vec), arg(r.Warp), arg(r.Cross), arg(s.Order))
}

// tapsOut gives o a device output for n rows of two fp32 taps
// (o.DeviceTaps, o.TapCols = 2), which the relations compare on the device
// with compare_rows in fp32 (under do).
func (d *Device) tapsOut(o *target.Output, n int) (*devOut, error) {
	return d.tapsCols(o, n, 2)
}

// tapsCols gives o a device output for n rows of cols fp32 taps
// (o.DeviceTaps, o.TapCols = cols) (under do).
func (d *Device) tapsCols(o *target.Output, n, cols int) (*devOut, error) {
	taps := newDevOut(d, n, cols, oracle.FP32)
	var err error
	if taps.buf, err = d.pool.get(4 * n * cols); err != nil {
		return nil, err
	}
	o.DeviceTaps, o.TapCols = taps, cols
	return taps, nil
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

func (d *Device) gemm(b *target.Batch, in *oracle.GEMMInput, dt oracle.DType, s oracle.GEMMSchedule, rows, sel []int, out *devOut) (func() error, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if in.M < 0 || in.K < 1 || in.N < 1 {
		return nil, fmt.Errorf("m %d k %d n %d: %w", in.M, in.K, in.N, oracle.ErrShape)
	}
	if err := firstErr(needItems(b, "x", len(in.X), in.M*in.K), need("w", len(in.W), in.K*in.N)); err != nil {
		return nil, err
	}
	if (in.N+255)/256 > 65535 {
		return nil, fmt.Errorf("n %d too large for one launch: %w", in.N, oracle.ErrShape)
	}
	xb, wb := encoded(dt, in.X), encoded(dt, in.W)
	nudge := newGEMMNudge(b, in, wb)
	return func() error {
		n := len(sel)
		x, w, rs, err := d.weightedInput(b, xb, wb, in.K, rows, sel, nudge)
		if err != nil {
			return err
		}
		defer d.pool.put(x, w, rs)
		if out.buf, err = d.pool.get(n * in.N * dsize(in.Out)); err != nil {
			return err
		}
		return d.gemmOn(x, w, rs, out.buf, n, in.K, in.N, dt, in.Out, s)
	}, nil
}

// gemmOn launches the gemm kernel on inputs already on the device (x: the
// batch, k values a row; w: k x n; rs: the selected rows or nil for n rows
// in order) into y, rows x n values, without waiting (under do).
func (d *Device) gemmOn(x, w, rs, y *buffer, rows, k, n int, dt, outDT oracle.DType, s oracle.GEMMSchedule) error {
	block := min(256, (n+31)/32*32)
	return d.launch("gemm", rows, (n+block-1)/block, block, ptrArg(x), ptrArg(w), ptrArg(y), ptrArg(rs),
		arg(k), arg(n), arg(dt), arg(outDT), arg(s.SplitK), arg(s.Combine))
}

func (d *Device) logprob(b *target.Batch, in *oracle.LogProbInput, dt oracle.DType, s oracle.LogProbSchedule, rows, sel []int, o *target.Output, out *devOut) (func() error, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if in.Rows < 0 || in.Vocab < 1 {
		return nil, fmt.Errorf("rows %d vocab %d: %w", in.Rows, in.Vocab, oracle.ErrShape)
	}
	if err := firstErr(needItems(b, "logits", len(in.Logits), in.Rows*in.Vocab), need("targets", len(in.Targets), in.Rows)); err != nil {
		return nil, err
	}
	tg := make([]int, len(in.Targets))
	for r, t := range in.Targets {
		if t < 0 || int(t) >= in.Vocab {
			return nil, fmt.Errorf("row %d target %d outside vocab %d: %w", r, t, in.Vocab, oracle.ErrShape)
		}
		tg[r] = int(t)
	}
	xb := encoded(dt, in.Logits)
	return func() error {
		n := len(sel)
		x, rs, rowOf, err := d.itemInput(b, xb, in.Vocab, rows, sel, nil)
		if err != nil {
			return err
		}
		// the kernel reads the target of the row it reads: item i's at
		// rowOf(i) (a lazy batch's rows are the case's items)
		byRow := tg
		if b.Lazy() {
			top := 0
			for i := range tg {
				top = max(top, rowOf(i))
			}
			byRow = make([]int, top+1)
			for i, v := range tg {
				byRow[rowOf(i)] = v
			}
		}
		t, err := d.uploadInts(byRow, true)
		if err != nil {
			d.pool.put(x, rs)
			return err
		}
		defer d.pool.put(x, t, rs)
		if out.buf, err = d.pool.get(4 * n); err != nil {
			return err
		}
		taps, err := d.tapsOut(o, n)
		if err != nil {
			return err
		}
		return d.logprobOn(x, t, rs, out.buf, taps.buf, n, in.Vocab, dt, s)
	}, nil
}

// logprobOn launches the logprob kernel on inputs already on the device
// (x: the logits, vocab a row; t: each row's target as int32; rs: the
// selected rows or nil for n rows in order) into y (one fp32 a row) and
// taps (two fp32 a row: row max, sum of exponentials), without waiting
// (under do).
func (d *Device) logprobOn(x, t, rs, y, taps *buffer, n, vocab int, dt oracle.DType, s oracle.LogProbSchedule) error {
	r := s.Reduce
	return d.launch("logprob", n, 1, r.Threads, ptrArg(x), ptrArg(t), ptrArg(y), ptrArg(taps), ptrArg(rs),
		arg(vocab), arg(dt), arg(r.Vec), arg(r.Warp), arg(r.Cross))
}

func attnCheck(heads, kvHeads, headDim int, s oracle.AttentionSchedule) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if heads < 1 || kvHeads < 1 || headDim < 1 || heads%kvHeads != 0 {
		return fmt.Errorf("heads %d kv heads %d head dim %d: %w", heads, kvHeads, headDim, oracle.ErrShape)
	}
	if headDim > 1024 {
		return fmt.Errorf("head dim %d above the kernels' 1024: %w", headDim, oracle.ErrShape)
	}
	return nil
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

func (d *Device) prefill(b *target.Batch, in *oracle.PrefillInput, dt oracle.DType, s oracle.AttentionSchedule, rows, sel []int, o *target.Output, out *devOut, wantTaps bool) (func() error, error) {
	if err := attnCheck(in.Heads, in.KVHeads, in.HeadDim, s); err != nil {
		return nil, err
	}
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
		if err := firstErr(need("q", len(in.Q), tokens*H*D), need("k", len(in.K), kvn), need("v", len(in.V), kvn)); err != nil {
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
		if rs, err = d.rowsel(rows, sel); err != nil {
			return err
		}
		if out.buf, err = d.pool.get(n * D * dsize(in.Out)); err != nil {
			return err
		}
		taps, err := d.attnTaps(o, n, D, in.Out, wantTaps)
		if err != nil {
			return err
		}
		return d.launch("prefill", n, 1, blockFor(D), ptrArg(q), ptrArg(k), ptrArg(v), ptrArg(out.buf), ptrArg(taps), ptrArg(rs),
			arg(in.SeqLen), arg(H), arg(KH), arg(D), arg(s.Tile), arg(dt), arg(in.Out))
	}, nil
}

func (d *Device) decode(b *target.Batch, in *oracle.DecodeInput, dt oracle.DType, s oracle.AttentionSchedule, rows, sel []int, o *target.Output, out *devOut, wantTaps bool) (func() error, error) {
	if err := attnCheck(in.Heads, in.KVHeads, in.HeadDim, s); err != nil {
		return nil, err
	}
	B, D, H, KH := len(in.K), in.HeadDim, in.Heads, in.KVHeads
	if len(in.V) != B {
		return nil, fmt.Errorf("%d key caches but %d value caches: %w", B, len(in.V), oracle.ErrShape)
	}
	// request r's cache: lens[r] tokens from token off[r] of the packed
	// caches
	off := make([]int, B)
	lens := make([]int, B)
	total := 0
	var kvLen func(it uint64) int
	if b.Lazy() {
		kvLen = func(it uint64) int { return b.Source.Case.Shape.KVLen(int(it)) }
	}
	for r := range in.K {
		if kvLen != nil {
			lens[r] = kvLen(b.Source.Key(r))
		} else {
			if len(in.K[r])%(KH*D) != 0 || len(in.V[r]) != len(in.K[r]) {
				return nil, fmt.Errorf("request %d cache sizes k %d v %d not a multiple of kv heads x head dim %d: %w",
					r, len(in.K[r]), len(in.V[r]), KH*D, oracle.ErrShape)
			}
			lens[r] = len(in.K[r]) / (KH * D)
		}
		if lens[r] < 1 {
			return nil, fmt.Errorf("request %d has %d cached tokens: %w", r, lens[r], oracle.ErrShape)
		}
		off[r] = total
		total += lens[r]
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
		var ko, kl, rs, part *buffer
		defer func() { d.pool.put(q, k, v, ko, kl, rs, part) }()
		if err != nil {
			return err
		}
		if ko, err = d.uploadInts(off, false); err != nil {
			return err
		}
		if kl, err = d.uploadInts(lens, false); err != nil {
			return err
		}
		if rs, err = d.rowsel(rows, sel); err != nil {
			return err
		}
		if part, err = d.pool.get(4 * n * s.Splits * (D + 2)); err != nil {
			return err
		}
		if out.buf, err = d.pool.get(n * D * dsize(in.Out)); err != nil {
			return err
		}
		taps, err := d.attnTaps(o, n, D, in.Out, wantTaps)
		if err != nil {
			return err
		}
		if err := d.launch("decode_split", n, s.Splits, blockFor(D), ptrArg(q), ptrArg(k), ptrArg(v), ptrArg(ko), ptrArg(kl),
			ptrArg(part), ptrArg(rs), arg(H), arg(KH), arg(D), arg(s.Tile), arg(s.Splits), arg(dt)); err != nil {
			return err
		}
		return d.launch("decode_combine", n, 1, blockFor(D), ptrArg(kl), ptrArg(part), ptrArg(out.buf), ptrArg(taps), ptrArg(rs),
			arg(H), arg(D), arg(s.Tile), arg(s.Splits), arg(in.Out))
	}, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
