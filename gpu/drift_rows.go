//go:build cuda

package gpu

import (
	"fmt"
	"sync/atomic"

	"gorgonia.org/cu"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/target"
)

// The GPU row drift models are the twins of the CPU row drift models
// (target/drift_rows.go), the scan controls whose path is chosen per row
// of a batch: cuda-<twin> runs the twin's own policy (target.OneRow,
// TailTileRows, SecondWaveRows, CaptureBucketRows, AtomicPartials) with
// our exact rmsnorm kernel, one launch a schedule class over that class's
// rows, merged into one output on the device, so each row is bitwise the
// twin's. Like the twins, they run on request only (Info.OnRequest).

// rowPolicy is a row drift model's policy for one run: the schedule of
// row `row` (a position in b) of batch b.
type rowPolicy = func(b *target.Batch, row int) oracle.Schedule

// rowDrifts lists the GPU row drift models by their CPU twin's name, each
// with the policy of a run (a new one every run: the nondeterministic
// model draws its rows' orders from the run's number, as its twin does).
var rowDrifts = []struct {
	twin   string
	policy func() rowPolicy
	random bool // two runs of a batch may differ
}{
	{"drift-rmsnorm-one-row-300", fixedRows(target.OneRow), false},
	{"drift-rmsnorm-tail-tile-64", fixedRows(target.TailTileRows), false},
	{"drift-rmsnorm-second-wave-264", fixedRows(target.SecondWaveRows), false},
	{"drift-rmsnorm-capture-buckets", fixedRows(target.CaptureBucketRows), false},
	{"drift-rmsnorm-atomic-128", func() rowPolicy { return target.AtomicPartials(atomicRuns.Add(1)) }, true},
}

// atomicRuns counts the runs of cuda-drift-rmsnorm-atomic-128.
var atomicRuns atomic.Uint64

func fixedRows(p rowPolicy) func() rowPolicy { return func() rowPolicy { return p } }

func init() {
	for _, m := range rowDrifts {
		m := m
		target.Register("cuda-"+m.twin, func() (target.Target, error) {
			twin, err := target.Lookup(m.twin)
			if err != nil {
				return nil, err
			}
			d, err := Default()
			if err != nil {
				return nil, err
			}
			info := twin.Info()
			info.Name, info.Device = "cuda-"+m.twin, deviceName(d)
			info.Models += "; on the GPU: our rmsnorm kernel, one launch a schedule over that schedule's rows"
			return &Target{info: info, rows: m.policy, random: m.random, dev: d}, nil
		})
	}
}

// Deterministic reports whether t answers a batch the same way every
// run: true for every GPU target but cuda-drift-rmsnorm-atomic-128, whose
// rows' orders are drawn anew each run. A scan checks a target that is
// not step by step, comparing every row of a rerun (the bulk check of
// prefixes tells a rerun by its count of differing rows only, and this
// model's rows differ from their rows alone in both runs).
func (t *Target) Deterministic() bool { return !t.random }

// rowRun is a run of consecutive output rows [from, to) that one schedule
// computes.
type rowRun struct {
	from, to int
	s        oracle.RMSNormSchedule
}

// rowRuns splits output rows 0..n-1 into runs of one schedule, row j's
// being at(j), each checked (an rmsnorm schedule a kernel can run).
func rowRuns(n int, at func(j int) oracle.Schedule) ([]rowRun, error) {
	var runs []rowRun
	for j := 0; j < n; j++ {
		s, err := scheduleOf[oracle.RMSNormSchedule](at(j))
		if err != nil {
			return nil, err
		}
		if k := len(runs) - 1; k >= 0 && runs[k].s == s {
			runs[k].to = j + 1
			continue
		}
		if err := s.Validate(); err != nil {
			return nil, err
		}
		runs = append(runs, rowRun{from: j, to: j + 1, s: s})
	}
	return runs, nil
}

// runByRow is Target.Run for a row drift model: the selected rows (all
// when rows is nil) grouped by the schedule the run's policy gives each
// in b, Device.Run once a schedule on its rows, and the groups' outputs
// and taps copied into one output in the selection's order (under do,
// queued: nothing waits).
func (t *Target) runByRow(d *Device, b *target.Batch, rows []int) (*target.Output, error) {
	sel, err := oracle.SelectRows(rows, b.Rows())
	if err != nil {
		return nil, err
	}
	p := t.rows()
	runs, err := rowRuns(len(sel), func(j int) oracle.Schedule { return p(b, sel[j]) })
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 { // no rows: the schedule of a first row
		return d.Run(b, p(b, 0), sel)
	}
	if len(runs) == 1 {
		return d.Run(b, runs[0].s, rows)
	}
	// the groups: each schedule's runs in output order, and their rows
	type group struct {
		s    oracle.RMSNormSchedule
		runs []rowRun
		rows []int
	}
	var gs []*group
	of := map[oracle.RMSNormSchedule]*group{}
	for _, r := range runs {
		g := of[r.s]
		if g == nil {
			g = &group{s: r.s}
			of[r.s] = g
			gs = append(gs, g)
		}
		g.runs = append(g.runs, r)
		g.rows = append(g.rows, sel[r.from:r.to]...)
	}
	parts := make([]*target.Output, len(gs))
	defer func() {
		for _, o := range parts {
			if o != nil {
				o.Release()
			}
		}
	}()
	for i, g := range gs {
		if parts[i], err = d.Run(b, g.s, g.rows); err != nil {
			return nil, err
		}
	}
	first := parts[0]
	o := &target.Output{Rows: sel, Cols: first.Cols, DType: first.DType}
	out := newDevOut(d, len(sel), o.Cols, o.DType)
	o.Device = out
	var taps *devOut
	if first.DeviceTaps != nil {
		taps = newDevOut(d, len(sel), first.TapCols, oracle.FP32)
		o.DeviceTaps, o.TapCols = taps, first.TapCols
	}
	err = d.do(func() error {
		var err error
		if out.buf, err = d.pool.get(len(sel) * o.Cols * dsize(o.DType)); err != nil {
			return err
		}
		if taps != nil {
			if taps.buf, err = d.pool.get(len(sel) * o.TapCols * 4); err != nil {
				return err
			}
		}
		for i, g := range gs {
			at := 0 // the group's output rows copied so far
			for _, r := range g.runs {
				n := r.to - r.from
				if err := d.copyRows(out, parts[i].Device.(*devOut), r.from, at, n); err != nil {
					return err
				}
				if taps != nil {
					if err := d.copyRows(taps, parts[i].DeviceTaps.(*devOut), r.from, at, n); err != nil {
						return err
					}
				}
				at += n
			}
		}
		return nil
	})
	if err != nil {
		o.Release()
		return nil, err
	}
	return o, nil
}

// copyRows queues the copy of rows [from, from+n) of src to rows [to,
// to+n) of dst, outputs of the same row size (under do).
func (d *Device) copyRows(dst, src *devOut, to, from, n int) error {
	size := src.cols * dsize(src.dt)
	if err := cu.MemcpyDtoDAsync(dst.buf.ptr+cu.DevicePtr(to*size), src.buf.ptr+cu.DevicePtr(from*size), int64(n*size), d.stream); err != nil {
		return fmt.Errorf("gpu: copy %d output rows: %w", n, err)
	}
	return nil
}
