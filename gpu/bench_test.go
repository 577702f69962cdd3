//go:build cuda

package gpu

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/values"
)

// timeDevice runs f (under do) reps times between two events and
// returns the device time per repetition.
func (d *Device) timeDevice(reps int, f func() error) (time.Duration, error) {
	var per time.Duration
	err := d.do(func() error {
		start, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return err
		}
		end, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return err
		}
		defer cu.DestroyEvent(&start)
		defer cu.DestroyEvent(&end)
		if err := f(); err != nil { // warm-up
			return err
		}
		if err := start.Record(cu.Stream{}); err != nil {
			return err
		}
		for i := 0; i < reps; i++ {
			if err := f(); err != nil {
				return err
			}
		}
		if err := end.Record(cu.Stream{}); err != nil {
			return err
		}
		if err := end.Synchronize(); err != nil {
			return err
		}
		ms, err := start.Elapsed(end)
		per = time.Duration(ms * float64(time.Millisecond) / float64(reps))
		return err
	})
	return per, err
}

// timeSerial runs f (under do) reps times, each followed by an event
// waited for, and returns the wall time per repetition.
func (d *Device) timeSerial(reps int, f func() error) (time.Duration, error) {
	var per time.Duration
	err := d.do(func() error {
		ev, err := cu.MakeEvent(cu.DisableTiming)
		if err != nil {
			return err
		}
		defer cu.DestroyEvent(&ev)
		run := func() error {
			if err := f(); err != nil {
				return err
			}
			if err := ev.Record(cu.Stream{}); err != nil {
				return err
			}
			return ev.Synchronize()
		}
		if err := run(); err != nil { // warm-up
			return err
		}
		start := time.Now()
		for i := 0; i < reps; i++ {
			if err := run(); err != nil {
				return err
			}
		}
		per = time.Since(start) / time.Duration(reps)
		return nil
	})
	return per, err
}

// benchDevice is a benchmark's device and its copy bandwidth over size
// bytes (copyBandwidth, bytes read plus written per second), measured
// first; an error fails b.
func benchDevice(b *testing.B, size int) (*Device, float64) {
	b.Helper()
	d := device(b)
	bw, err := d.copyBandwidth(size)
	if err != nil {
		b.Fatal(err)
	}
	return d, bw
}

// copyBandwidth measures device-to-device copy bandwidth (bytes read plus
// bytes written per second) with cuMemcpyDtoD over two buffers of size
// bytes.
func (d *Device) copyBandwidth(size int) (float64, error) {
	var a, b *buffer
	err := d.do(func() (err error) {
		if a, err = d.pool.get(size); err != nil {
			return err
		}
		b, err = d.pool.get(size)
		return err
	})
	if err != nil {
		return 0, err
	}
	defer d.do(func() error { d.pool.put(a, b); return nil })
	per, err := d.timeDevice(20, func() error { return cu.MemcpyDtoDAsync(b.ptr, a.ptr, int64(size), cu.Stream{}) })
	if err != nil {
		return 0, err
	}
	return 2 * float64(size) / per.Seconds(), nil
}

// BenchmarkCompare measures the compare kernel over 2^28 bf16 values per
// side (65536 rows of 4096, 512 MiB each; a few planted differences) and
// reports its throughput, counting the bytes of both inputs, against the
// device copy bandwidth measured in the same run (bytes read plus written).
func BenchmarkCompare(b *testing.B) {
	const rows, cols = 65536, 4096
	n := rows * cols
	d, copyBW := benchDevice(b, 2*n)
	r := rand.New(rand.NewPCG(3, 4))
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = oracle.BF16ToF32(uint16(r.Uint32()))
	}
	pairs := spec.Iota(rows)
	var x, y, pa *buffer
	var res *slot
	err := d.do(func() (err error) {
		if x, err = d.upload(oracle.BF16, vals); err != nil {
			return err
		}
		for i := 0; i < 8; i++ { // plant: flip the lowest bit of 8 values
			j := r.IntN(n)
			vals[j] = oracle.BF16ToF32(oracle.BF16FromF32(vals[j]) ^ 1)
		}
		if y, err = d.upload(oracle.BF16, vals); err != nil {
			return err
		}
		if pa, err = d.uploadInts(pairs, false); err != nil {
			return err
		}
		res, err = d.takeSlot(4, 8+32*rows)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	vals = nil
	defer d.do(func() error { d.pool.put(x, y, pa); d.putSlot(res); return nil })
	count, addr := res.countAt(0)
	b.ResetTimer()
	per, err := d.timeDevice(b.N, func() error {
		return d.launchCompare(x, y, oracle.BF16, oracle.BF16, oracle.BF16, cols, pa, pa, rows, res.res, addr)
	})
	if err != nil {
		b.Fatal(err)
	}
	// timeDevice has waited for the last compare, which stored its count
	if found := binary.LittleEndian.Uint32(count); found == 0 || found > 8 {
		b.Fatalf("compare found %d differing rows, planted 8 values", found)
	}
	bw := 2 * 2 * float64(n) / per.Seconds()
	b.ReportMetric(bw/1e12, "TB/s")
	b.ReportMetric(copyBW/1e12, "copy-TB/s")
	b.ReportMetric(100*bw/copyBW, "%-of-copy")
	b.ReportMetric(float64(per.Microseconds()), "us/compare")
}

// BenchmarkRMSNormInvariance measures batch-invariance checks of RMSNorm
// at 2274 x 4096 bf16 (schedule of cuda-rmsnorm): one check runs the
// kernel on the batch of 2274 rows and on its first 928 rows as a batch of
// their own, and compares the 928 shared rows and their fp32 taps on the
// device; only the summaries cross to the host. Inputs are resident on the
// device.
//
//	bare-us:      device time of the two kernels and the two compares,
//	              back to back between two events (no host work between)
//	queued-us:    device time of what the harness queues for one check
//	              (the same kernels plus the compares' events), back to
//	              back with no host waits between checks
//	harness-us:   wall time per check through the package's path, one
//	              check at a time: two runs (rmsnormOn, as Target.Run
//	              calls it), then, as fuzz's relations do, the taps
//	              compare queued (StartCompare), CompareRows on the
//	              outputs, and the taps compare waited for; waits are
//	              outside the device's call queue
//	bare1-us:     wall time of the bare kernels one check at a time, each
//	              launched and waited for (an event) before the next
//	overhead1-%:  (harness - bare1) / bare1: what the package adds to a
//	              check that overlaps with nothing, beyond the launch and
//	              completion latency any such check pays
//	harness4-us:  the same with 4 checks in flight (4 goroutines, as
//	              campaign workers share one Device): wall time / checks
//	overhead-%:   (harness - bare) / bare, likewise overhead4-%
//	checks/s:     with 4 checks in flight
func BenchmarkRMSNormInvariance(b *testing.B) {
	d := device(b)
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm, In: spec.BF16,
		Out: spec.BF16, Dist: spec.DistNormal, Seed: 1, Eps: 1e-6, Shape: spec.Shape{Rows: 2274, Hidden: 4096}}
	batch, err := inputs.Of(c)
	if err != nil {
		b.Fatal(err)
	}
	in := batch.Input.(*oracle.RMSNormInput)
	s := target.OracleRMSNormSchedule
	const small = 928
	pairs := spec.Iota(small)
	var x, w, dpairs *buffer
	var res, tres *slot
	err = d.do(func() (err error) {
		if x, err = d.upload(oracle.BF16, in.X); err != nil {
			return err
		}
		if w, err = d.upload(oracle.BF16, in.W); err != nil {
			return err
		}
		if dpairs, err = d.uploadInts(pairs, false); err != nil {
			return err
		}
		if res, err = d.takeSlot(4, 8+32*small); err != nil {
			return err
		}
		tres, err = d.takeSlot(4, 8+32*small)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	defer d.do(func() error { d.pool.put(x, w, dpairs); d.putSlot(res); d.putSlot(tres); return nil })
	_, count := res.countAt(0)
	_, tcount := tres.countAt(0)
	run := func(n int) (*target.Output, error) {
		o := &target.Output{}
		out := newDevOut(d, n, in.Hidden, oracle.BF16)
		o.Device = out
		err := d.do(func() error {
			return d.rmsnormOn(x, w, nil, n, in.Hidden, oracle.BF16, oracle.BF16, in.Eps, s, o, out)
		})
		return o, err
	}
	check := func() error {
		big, err := run(in.Rows)
		if err != nil {
			return err
		}
		defer big.Release()
		sm, err := run(small)
		if err != nil {
			return err
		}
		defer sm.Release()
		waitTaps, err := big.DeviceTaps.(target.CompareStarter).StartCompare(sm.DeviceTaps, pairs, pairs, oracle.FP32)
		if err != nil {
			return err
		}
		diffs, err := big.Device.CompareRows(sm.Device, pairs, pairs, oracle.BF16)
		tapDiffs, tapErr := waitTaps()
		if err = ops.FirstErr(err, tapErr); err != nil {
			return err
		}
		if len(diffs)+len(tapDiffs) != 0 {
			return fmt.Errorf("cuda-rmsnorm not batch invariant: %d rows and %d taps rows differ", len(diffs), len(tapDiffs))
		}
		return nil
	}
	// bare: the four kernels alone.
	bareCheck := func() error {
		var out, taps [2]*buffer
		var err error
		for i, n := range []int{in.Rows, small} {
			if out[i], err = d.pool.get(n * in.Hidden * 2); err != nil {
				return err
			}
			if taps[i], err = d.pool.get(8 * n); err != nil {
				return err
			}
			r := s.Reduce
			if err := d.launch("rmsnorm", n, 1, r.Threads, ptrArg(x), ptrArg(w), ptrArg(out[i]), ptrArg(taps[i]), 0,
				arg(in.Hidden), arg(oracle.BF16), arg(oracle.BF16), arg(0), arg(r.Vec), arg(r.Warp), arg(r.Cross), arg(s.Order)); err != nil {
				return err
			}
		}
		defer d.pool.put(out[0], out[1], taps[0], taps[1])
		if err := d.launchCompare(out[0], out[1], oracle.BF16, oracle.BF16, oracle.BF16, in.Hidden, dpairs, dpairs, small, res.res, count); err != nil {
			return err
		}
		return d.launchCompare(taps[0], taps[1], oracle.FP32, oracle.FP32, oracle.FP32, 2, dpairs, dpairs, small, tres.res, tcount)
	}
	bare, err := d.timeDevice(200, bareCheck)
	if err != nil {
		b.Fatal(err)
	}
	// bare1: the bare kernels one check at a time, each launched and then
	// waited for with an event before the next: the floor that launch and
	// completion latency set for checks that do not overlap.
	bare1, err := d.timeSerial(200, bareCheck)
	if err != nil {
		b.Fatal(err)
	}
	// queued: what the harness puts on the stream for one check (the runs'
	// kernels, the two compares, their events), back to back with no host
	// waits; harness4 - queued is host time the GPU waited for.
	queued, err := d.timeDevice(200, func() error {
		var outs [2]*target.Output
		for i, n := range []int{in.Rows, small} {
			o := &target.Output{}
			out := newDevOut(d, n, in.Hidden, oracle.BF16)
			o.Device, outs[i] = out, o
			if err := d.rmsnormOn(x, w, nil, n, in.Hidden, oracle.BF16, oracle.BF16, in.Eps, s, o, out); err != nil {
				return err
			}
		}
		buf := func(o target.DeviceOutput) *buffer { return o.(*devOut).buf }
		sa, err := d.enqueueCompare(buf(outs[0].Device), buf(outs[1].Device), oracle.BF16, oracle.BF16, oracle.BF16, in.Hidden, pairs, pairs)
		if err != nil {
			return err
		}
		sb, err := d.enqueueCompare(buf(outs[0].DeviceTaps), buf(outs[1].DeviceTaps), oracle.FP32, oracle.FP32, oracle.FP32, 2, pairs, pairs)
		if err != nil {
			return err
		}
		// the stream runs in order: the next use of these slots and
		// buffers queues behind this check, and nothing reads them here
		d.putSlot(sa)
		d.putSlot(sb)
		for _, o := range outs {
			for _, h := range []*devOut{o.Device.(*devOut), o.DeviceTaps.(*devOut)} {
				d.pool.put(h.buf)
				h.buf = nil
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := check(); err != nil { // warm-up: slots, pool
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := check(); err != nil {
			b.Fatal(err)
		}
	}
	harness := time.Since(start) / time.Duration(b.N)
	const inFlight = 4
	var wg sync.WaitGroup
	errs := make(chan error, inFlight)
	start = time.Now()
	for g := 0; g < inFlight; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < b.N; i++ {
				if err := check(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	harness4 := time.Since(start) / time.Duration(inFlight*b.N)
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	over := func(h, base time.Duration) float64 { return 100 * (h.Seconds() - base.Seconds()) / base.Seconds() }
	b.ReportMetric(float64(bare.Nanoseconds())/1e3, "bare-us")
	b.ReportMetric(float64(queued.Nanoseconds())/1e3, "queued-us")
	b.ReportMetric(float64(bare1.Nanoseconds())/1e3, "bare1-us")
	b.ReportMetric(over(harness, bare1), "overhead1-%")
	b.ReportMetric(float64(harness.Nanoseconds())/1e3, "harness-us")
	b.ReportMetric(float64(harness4.Nanoseconds())/1e3, "harness4-us")
	b.ReportMetric(over(harness, bare), "overhead-%")
	b.ReportMetric(over(harness4, bare), "overhead4-%")
	b.ReportMetric(1/harness4.Seconds(), "checks/s")
}

// BenchmarkRMSNormCheckEndToEnd is the same check through the public
// path: Target.Run on the 2274-row batch and on a 928-row batch (inputs
// converted and uploaded from the host each time) and CompareRows.
func BenchmarkRMSNormCheckEndToEnd(b *testing.B) {
	ctx := context.Background()
	tg := lookup2(b, Name(spec.OpRMSNorm))
	mk := func(rows int) *target.Batch {
		c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm, In: spec.BF16,
			Out: spec.BF16, Dist: spec.DistNormal, Seed: 1, Eps: 1e-6, Shape: spec.Shape{Rows: rows, Hidden: 4096}}
		bt, err := inputs.Of(c)
		if err != nil {
			b.Fatal(err)
		}
		return bt
	}
	big, small := mk(2274), mk(928)
	pairs := spec.Iota(928)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o1, err := tg.Run(ctx, big, nil)
		if err != nil {
			b.Fatal(err)
		}
		o2, err := tg.Run(ctx, small, nil)
		if err != nil {
			b.Fatal(err)
		}
		diffs, err := o1.Device.CompareRows(o2.Device, pairs, pairs, oracle.BF16)
		if err != nil {
			b.Fatal(err)
		}
		if len(diffs) != 0 {
			b.Fatalf("%d rows differ", len(diffs))
		}
		o1.Release()
		o2.Release()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
}

func lookup2(b *testing.B, name string) target.Target {
	tg, err := target.Lookup(name)
	if err != nil {
		b.Fatal(err)
	}
	return tg
}

// BenchmarkKernels measures two kernels alone on the device, at the
// issue's 2274 x 4096 bf16: one rmsnorm launch with cuda-rmsnorm's
// schedule (it reads x and writes y: 4 bytes a value), and gen_values
// making the 2274 rows of a normal tensor, against the copy bandwidth
// measured in the same run (bytes read plus written per second).
func BenchmarkKernels(b *testing.B) {
	const rows, hidden = 2274, 4096
	n := rows * hidden
	d, copyBW := benchDevice(b, 2*n)
	s := target.OracleRMSNormSchedule
	tn := values.Tensor{Seed: 1, ID: values.TensorX, Dist: spec.DistNormal, DType: oracle.BF16, Scale: 1}
	code, err := values.DistCode(tn.Dist)
	if err != nil {
		b.Fatal(err)
	}
	ones := make([]float32, hidden)
	for i := range ones {
		ones[i] = 1
	}
	var x, w, y, taps *buffer
	err = d.do(func() (err error) {
		if x, err = d.pool.get(2 * n); err != nil {
			return err
		}
		if y, err = d.pool.get(2 * n); err != nil {
			return err
		}
		if taps, err = d.pool.get(8 * rows); err != nil {
			return err
		}
		w, err = d.upload(oracle.BF16, ones)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	defer d.do(func() error { d.pool.put(x, w, y, taps); return nil })
	b.ResetTimer()
	gen, err := d.timeDevice(b.N, func() error { return d.launchGen(x, tn, code, RowKeys{}, 0, rows, hidden) })
	if err != nil {
		b.Fatal(err)
	}
	r := s.Reduce
	rms, err := d.timeDevice(b.N, func() error {
		return d.launch("rmsnorm", rows, 1, r.Threads, ptrArg(x), ptrArg(w), ptrArg(y), ptrArg(taps), 0,
			arg(hidden), arg(oracle.BF16), arg(oracle.BF16), arg(math.Float32bits(1e-6)), arg(r.Vec), arg(r.Warp), arg(r.Cross), arg(s.Order))
	})
	if err != nil {
		b.Fatal(err)
	}
	bw := 4 * float64(n) / rms.Seconds()
	b.ReportMetric(float64(rms.Nanoseconds())/1e3, "rmsnorm-us")
	b.ReportMetric(bw/1e12, "rmsnorm-TB/s")
	b.ReportMetric(100*bw/copyBW, "rmsnorm-%-of-copy")
	b.ReportMetric(copyBW/1e12, "copy-TB/s")
	b.ReportMetric(float64(gen.Nanoseconds())/1e3, "gen-us")
	b.ReportMetric(float64(n)/gen.Seconds()/1e9, "gen-Gvalues/s")
}

// BenchmarkDriverCalls measures what one host call of a check costs on the
// device's queue, each in a loop of 1000 inside one call (do), so the
// figures are the driver's, not the queue's:
//
//	launch-us   gen_values of one value (the smallest launch)
//	record-us   cuEventRecord
//	copy-us     cuMemcpyHtoDAsync of 64 bytes from the upload ring
//	context-us  cuCtxSetCurrent
//	do-us       an empty do call (the queue's cost, uncontended)
func BenchmarkDriverCalls(b *testing.B) {
	d := device(b)
	const reps = 1000
	tn := values.Tensor{Seed: 1, ID: values.TensorX, Dist: spec.DistNormal, DType: oracle.BF16, Scale: 1}
	var ev cu.Event
	var out *buffer
	err := d.do(func() (err error) {
		if ev, err = cu.MakeEvent(cu.DisableTiming); err != nil {
			return err
		}
		out, err = d.pool.get(256)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	defer d.do(func() error {
		d.pool.put(out)
		return cu.DestroyEvent(&ev)
	})
	per := func(f func() error) float64 {
		var took time.Duration
		err := d.do(func() error {
			start := time.Now()
			for range reps {
				if err := f(); err != nil {
					return err
				}
			}
			took = time.Since(start)
			return d.sync("driver calls")
		})
		if err != nil {
			b.Fatal(err)
		}
		return float64(took.Microseconds()) / reps
	}
	var launch, record, cp, ctx, do float64
	for range b.N {
		launch = per(func() error { return d.launchGen(out, tn, 0, RowKeys{}, 0, 1, 1) })
		record = per(func() error { return ev.Record(cu.Stream{}) })
		cp = per(func() error {
			host, err := d.stageUpload(64)
			if err != nil {
				return err
			}
			return cu.MemcpyHtoDAsync(out.ptr, unsafe.Pointer(&host[0]), 64, cu.Stream{})
		})
		ctx = per(func() error { return cu.SetCurrentContext(d.ctx) })
		start := time.Now()
		for range reps {
			d.do(func() error { return nil })
		}
		do = float64(time.Since(start).Microseconds()) / reps
	}
	b.ReportMetric(launch, "launch-us")
	b.ReportMetric(record, "record-us")
	b.ReportMetric(cp, "copy-us")
	b.ReportMetric(ctx, "context-us")
	b.ReportMetric(do, "do-us")
}
