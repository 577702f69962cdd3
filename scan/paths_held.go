package scan

import (
	"context"
	"errors"
	"fmt"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Two adapters that take the path-scan frames (external.Target.StepsCuts:
// scan_cuts in their hellos) hold a draw's sequences once, in their own
// processes, on their devices, and answer each frame of KV cuts with a
// digest (external.RowDigest) of every compared row: the prefill's rows
// of the last position at each cut, the decode's rows of the query there.
// A KV length then costs the two ops and 16 bytes a row of reply, where
// sending its two batches through the pipe (pathStep) moves the cut
// sequences (S x v tokens of q, k and v) twice. The compares are the
// same compares of the same rows (pathDiffers), of digests instead of
// bits: the map, the classes and the taps rule are the same.

// cutsPerFrame bounds the KV cuts of one frame, and cutsWork the
// prefill's attention scores they make (seqs x heads x v x v, summed
// over the cuts; one cut a frame at least): a frame's work, and the wait
// for its reply, stay bounded as v grows.
const (
	cutsPerFrame = 64
	cutsWork     = 1 << 28
)

// heldPaths returns the prefill and decode targets of a path scan as
// adapters that take steps of KV cuts, or nils when either does not: the
// scan then sends every KV length's two batches (pathStep).
func heldPaths(pre, dec target.Target) (*external.Target, *external.Target) {
	p, ok := pre.(*external.Target)
	d, ok2 := dec.(*external.Target)
	if !ok || !ok2 || !p.StepsCuts() || !d.StepsCuts() {
		return nil, nil
	}
	return p, d
}

// pathCuts runs draw dist of a path scan on adapters that take steps of KV
// cuts: every process of the two adapters (cutProcs) holds b, the draw's
// sequences of To tokens, and the scan's KV lengths go a frame of cuts at
// a time (cutFrames) to the processes, frame i to pair i mod P in every
// draw (an attention library plans a kernel per shape in each process
// once), the prefill and decode of a frame at once; the frames are
// classified in order. A value's class is pathAgree or pathDiffer, as
// pathStep's.
func (sc *scanner) pathCuts(ctx context.Context, pre, dec *external.Target, b *target.Batch, dist spec.Dist, noTaps bool) ([]string, error) {
	_, in, err := b.Kind()
	if err != nil {
		return nil, err
	}
	p := in.(*oracle.PrefillInput)
	procs, err := sc.cutProcs(ctx, pre, dec, len(sc.values))
	if err != nil {
		return nil, fmt.Errorf("scan: draw %s: %w", dist, err)
	}
	if err := procs.hold(ctx, b); err != nil {
		return nil, fmt.Errorf("scan: draw %s: %w", dist, err)
	}
	frames := cutFrames(sc.values, p.Seqs*p.Heads, procs.size())
	answers, stop := procs.run(ctx, frames)
	defer stop() // after an error: no further frame starts, the ones in flight end
	cls := make([]string, 0, len(sc.values))
	every := spec.Iota(p.Seqs * p.Heads)
	for i, cuts := range frames {
		a := <-answers[i]
		if a.err != nil {
			return nil, fmt.Errorf("scan: draw %s, kv = %d..%d: %w", dist, cuts[0], cuts[len(cuts)-1], a.err)
		}
		for j, v := range cuts {
			d, err := pathDiffers(cutOutput(a.pre[j], every, sc.dt), cutOutput(a.dec[j], every, sc.dt), sc.dt, noTaps)
			if err != nil {
				return nil, fmt.Errorf("scan: draw %s, kv = %d: %w", dist, v, err)
			}
			sc.res.Batches += 2
			sc.res.RowsCompared += int64(len(every))
			c := pathAgree
			if d {
				c = pathDiffer
			}
			cls = append(cls, c)
			sc.step()
		}
	}
	return cls, nil
}

// cutFrames splits the KV lengths vs into frames of at most cutsPerFrame
// cuts (spread over procs > 1 processes: at most len(vs) / (4 procs),
// rounded up, so that the processes get about four frames each), whose
// prefill scores (rows x v x v, rows the sequences x heads) sum to at
// most cutsWork, one cut a frame at least, in order.
func cutFrames(vs []int, rows, procs int) [][]int {
	most := cutsPerFrame
	if procs > 1 {
		most = min(most, max(1, (len(vs)+4*procs-1)/(4*procs)))
	}
	var frames [][]int
	for i := 0; i < len(vs); {
		j, work := i, 0
		for j < len(vs) && j-i < most {
			w := rows * vs[j] * vs[j]
			if j > i && work+w > cutsWork {
				break
			}
			work += w
			j++
		}
		frames = append(frames, vs[i:j:j])
		i = j
	}
	return frames
}

// cutOutput is one KV cut's answer as an output: its rows (every) and
// taps as the adapter's digests.
func cutOutput(st *external.Step, every []int, dt oracle.DType) *target.Output {
	o := &target.Output{Rows: every, Cols: st.Cols, DType: dt, TapCols: st.TapCols, Device: cutDigests(st.Digests)}
	if st.TapCols > 0 {
		o.DeviceTaps = cutDigests(st.TapDigests)
	}
	return o
}

// cutDigests is a KV cut's rows (or taps) as the adapter's digests: a
// target.DeviceOutput whose compares compare digests. A path scan fetches
// no rows: its classes are agree and differ.
type cutDigests []uint64

// CompareRows reports the pairs whose digests differ; a digest says
// nothing of which column differs (FirstCol -1, Count 1).
func (d cutDigests) CompareRows(other target.DeviceOutput, ra, rb []int, _ oracle.DType) ([]target.RowDiff, error) {
	o, ok := other.(cutDigests)
	if !ok {
		return nil, fmt.Errorf("compare a KV cut's digests with a %T", other)
	}
	var ds []target.RowDiff
	for i := range ra {
		if d[ra[i]] != o[rb[i]] {
			ds = append(ds, target.RowDiff{PosA: ra[i], PosB: rb[i], Count: 1, FirstCol: -1})
		}
	}
	return ds, nil
}

// Fetch fails: the adapter answered a KV cut with digests only.
func (cutDigests) Fetch([]int) ([]float32, error) {
	return nil, errors.New("a KV cut of a path scan is answered with digests, not rows")
}

func (cutDigests) Release() {}
