//go:build cuda

package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

func device(t testing.TB) *Device {
	t.Helper()
	d, err := Default()
	if err != nil {
		t.Fatalf("open GPU: %v", err)
	}
	return d
}

// oracleRun is the oracle with schedule s on the selected rows of b, output
// rounded to b.Out, with the taps the GPU kernels write: RMSNorm's and
// log-prob's, and attention's fp32 outputs before rounding (the oracle
// targets', target.RunOracle). GEMM's fp32 outputs, which the oracle
// targets give as taps, are not written by the gemm kernel.
func oracleRun(b *target.Batch, s oracle.Schedule, rows []int) (*target.Output, error) {
	sel := b.Rows0(rows)
	o := &target.Output{Rows: sel, Cols: b.Cols(), DType: b.OutDType()}
	var err error
	switch b.Op {
	case spec.OpRMSNorm:
		var taps []oracle.RMSNormTap
		o.Values, taps, err = oracle.RMSNormTaps(*b.Input.(*oracle.RMSNormInput), s.(oracle.RMSNormSchedule), rows)
		for _, t := range taps {
			o.Taps = append(o.Taps, t.SumSq, t.Rstd)
		}
		o.TapCols = 2
	case spec.OpGEMM:
		o.Values, err = oracle.GEMM(*b.Input.(*oracle.GEMMInput), s.(oracle.GEMMSchedule), rows)
	case spec.OpLogProb:
		var taps []oracle.LogProbTap
		o.Values, taps, err = oracle.LogProbTaps(*b.Input.(*oracle.LogProbInput), s.(oracle.LogProbSchedule), rows)
		for _, t := range taps {
			o.Taps = append(o.Taps, t.Max, t.SumExp)
		}
		o.TapCols = 2
	case spec.OpAttnPrefill, spec.OpAttnDecode:
		return target.RunOracle(b, s, rows)
	}
	return o, err
}

var (
	dtypes = []spec.DType{spec.BF16, spec.FP16, spec.FP32}
	dists  = []spec.Dist{spec.DistNormal, spec.DistHeavy, spec.DistOutlier, spec.DistConstant, spec.DistSignedZero,
		spec.DistSubnormal, spec.DistNearOverflow, spec.DistTies}
)

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func randReduction(r *rand.Rand) oracle.Reduction {
	return oracle.Reduction{Threads: 1 << r.IntN(11), Vec: pick(r, 1, 2, 4, 8),
		Warp: oracle.WarpOrder(r.IntN(2)), Cross: oracle.CrossOrder(r.IntN(2))}
}

// parityCase is one fuzzed case with the schedule both sides run and the
// selected rows (nil: all).
type parityCase struct {
	c     spec.Case
	sched oracle.Schedule
	rows  []int
}

// genParity makes a fuzzed case of op: random shape, dtypes, distribution,
// seed and schedule. big asks for one of the dispatch-threshold shapes
// (rows 928, 2274, 4548; KV up to 4096).
func genParity(r *rand.Rand, op spec.Op, big bool) parityCase {
	c := spec.Case{Version: spec.CaseVersion, Op: op, In: pick(r, dtypes...), Out: pick(r, dtypes...),
		Dist: pick(r, dists...), Seed: r.Uint64(), GenVersion: spec.GeneratorVersion}
	var s oracle.Schedule
	switch op {
	case spec.OpRMSNorm:
		c.Shape = spec.Shape{Rows: 1 + r.IntN(24), Hidden: pick(r, 1, 3, 31, 64, 100, 257, 1024, 2048, 4096, 5000)}
		if big {
			c.Shape = spec.Shape{Rows: pick(r, 928, 2274, 4548), Hidden: 4096}
		}
		c.Eps = pick[float32](r, 1e-6, 1e-5, 0)
		s = oracle.RMSNormSchedule{Reduce: randReduction(r), Order: oracle.ScaleOrder(r.IntN(2))}
	case spec.OpGEMM:
		c.Shape = spec.Shape{Rows: 1 + r.IntN(16), Hidden: 1 + r.IntN(300), N: 1 + r.IntN(300)}
		if big {
			c.Shape = spec.Shape{Rows: pick(r, 928, 2274, 4548), Hidden: 64, N: 32}
		}
		g := oracle.GEMMSchedule{SplitK: pick(r, 1, 2, 3, 4, 7, 8, 16, 64)}
		if g.SplitK&(g.SplitK-1) == 0 && r.IntN(2) == 0 {
			g.Combine = oracle.CrossTree
		}
		s = g
	case spec.OpLogProb:
		c.Shape = spec.Shape{Rows: 1 + r.IntN(16), Vocab: pick(r, 1, 2, 17, 1000, 4096, 32000)}
		if big {
			c.Shape = spec.Shape{Rows: pick(r, 928, 2274, 4548), Vocab: 1024}
		}
		s = oracle.LogProbSchedule{Reduce: randReduction(r)}
	case spec.OpAttnPrefill:
		kvh := pick(r, 1, 2)
		c.Shape = spec.Shape{Seqs: 1 + r.IntN(3), SeqLen: 1 + r.IntN(80), Heads: kvh * pick(r, 1, 2, 4), KVHeads: kvh,
			HeadDim: pick(r, 1, 8, 64, 128)}
		if big {
			c.Shape.Seqs, c.Shape.SeqLen, c.Shape.HeadDim = 1, 200+r.IntN(200), 64
		}
		s = oracle.AttentionSchedule{Tile: pick(r, 1, 3, 16, 48, 64, 128, 1024), Splits: 1}
	case spec.OpAttnDecode:
		kvh := pick(r, 1, 2)
		c.Shape = spec.Shape{Rows: 1 + r.IntN(6), Heads: kvh * pick(r, 1, 2, 4), KVHeads: kvh, HeadDim: pick(r, 1, 8, 64, 128)}
		lens := make([]int, 1+r.IntN(3))
		for i := range lens {
			lens[i] = 1 + r.IntN(pick(r, 2, 64, 600))
		}
		if big {
			lens = []int{1, 4096, 49, 2048}
			c.Shape.HeadDim = 64
		}
		c.Shape.KVLens = lens
		s = oracle.AttentionSchedule{Tile: pick(r, 1, 16, 48, 64, 128, 1024), Splits: pick(r, 1, 2, 3, 4, 16, 128)}
	}
	pc := parityCase{c: c, sched: s}
	if r.IntN(3) == 0 {
		b, err := inputs.Of(c)
		if err == nil {
			n := b.Rows()
			k := 1 + r.IntN(n)
			pc.rows = r.Perm(n)[:k]
		}
	}
	return pc
}

func bitsEqual(dt oracle.DType, a, b []float32) (int, bool) {
	for i := range a {
		if oracle.ToBits(dt, a[i]) != oracle.ToBits(dt, b[i]) {
			return i, false
		}
	}
	return -1, len(a) == len(b)
}

// TestParity is the three-way parity: for every exact kernel, over fuzzed
// cases, (1) the kernel's rows fetched to the host equal the oracle's bit
// for bit (taps too), (2) the device compare of the kernel's output with
// the oracle's output uploaded reports no differing row, and (3) on planted
// differences the device compare returns exactly target.CompareHost's
// summaries.
func TestParity(t *testing.T) {
	d := device(t)
	perOp := 2100
	if testing.Short() {
		perOp = 200
	}
	total := 0
	for _, op := range spec.Ops {
		t.Run(string(op), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(len(op)), 0x6270))
			n, planted := 0, 0
			maxRows, maxKV := 0, 0
			for i := 0; i < perOp; i++ {
				pc := genParity(r, op, i%100 == 0)
				b, err := inputs.Of(pc.c)
				if err != nil {
					t.Fatalf("case %d: inputs: %v", i, err)
				}
				want, err := oracleRun(b, pc.sched, pc.rows)
				if err != nil {
					t.Fatalf("case %d: oracle: %v", i, err)
				}
				got, err := d.Run(b, pc.sched, pc.rows)
				if err != nil {
					t.Fatalf("case %d (%+v %v): gpu: %v", i, pc.c.Shape, pc.sched, err)
				}
				all := spec.Iota(len(got.Rows))
				if err := got.ToHost(); err != nil {
					t.Fatal(err)
				}
				vals := got.Values
				dt := got.DType
				if j, ok := bitsEqual(dt, vals, want.Values); !ok {
					row, col := j/got.Cols, j%got.Cols
					t.Fatalf("case %d %s %+v in=%s out=%s dist=%s seed=%d schedule %v rows %v: row %d col %d: gpu %s oracle %s",
						i, op, pc.c.Shape, pc.c.In, pc.c.Out, pc.c.Dist, pc.c.Seed, pc.sched, pc.rows != nil, got.Rows[row], col,
						oracle.Hex(dt, vals[j]), oracle.Hex(dt, want.Values[j]))
				}
				if j, ok := bitsEqual(oracle.FP32, got.Taps, want.Taps); !ok {
					t.Fatalf("case %d %s %+v schedule %v: tap %d: gpu %08x oracle %08x", i, op, pc.c.Shape, pc.sched, j,
						math.Float32bits(got.Taps[j]), math.Float32bits(want.Taps[j]))
				}
				if got.DeviceTaps != nil { // the device compare of the taps, in fp32
					upTaps, err := d.Upload(&target.Output{Rows: want.Rows, Cols: want.TapCols, DType: oracle.FP32, Values: want.Taps})
					if err != nil {
						t.Fatal(err)
					}
					diffs, err := got.DeviceTaps.CompareRows(upTaps, all, all, oracle.FP32)
					if err != nil || len(diffs) != 0 {
						t.Fatalf("case %d: device compare of the taps: %d rows differ (%v) where the host found none", i, len(diffs), err)
					}
					upTaps.Release()
				}
				up, err := d.Upload(want)
				if err != nil {
					t.Fatal(err)
				}
				diffs, err := got.Device.CompareRows(up, all, all, dt)
				if err != nil {
					t.Fatal(err)
				}
				if len(diffs) != 0 {
					t.Fatalf("case %d: device compare found %d differing rows where the host found none: %+v", i, len(diffs), diffs[0])
				}
				up.Release()
				if i%7 == 0 {
					planted++
					checkPlanted(t, d, r, got, vals, want)
				}
				got.Release()
				n++
				maxRows = max(maxRows, b.Rows())
				for _, l := range pc.c.Shape.KVLens {
					maxKV = max(maxKV, l)
				}
				maxKV = max(maxKV, pc.c.Shape.SeqLen)
			}
			t.Logf("%s: %d fuzzed cases bitwise equal to the oracle (%d with planted differences found by the device compare); largest batch %d rows, longest KV %d",
				op, n, planted, maxRows, maxKV)
			total += n
		})
	}
	t.Logf("three-way parity: %d cases over %d ops", total, len(spec.Ops))
}

// checkPlanted flips bits in some rows of the oracle output, compares on
// the device and on the host, in the output dtype and in a narrower one,
// and requires the same summaries.
func checkPlanted(t *testing.T, d *Device, r *rand.Rand, got *target.Output, vals []float32, want *target.Output) {
	t.Helper()
	bad := *want
	bad.Values = slices.Clone(want.Values)
	dt := want.DType
	for k := 0; k < 1+r.IntN(4); k++ {
		j := r.IntN(len(bad.Values))
		bits := oracle.ToBits(dt, bad.Values[j]) ^ (1 << r.IntN(dt.Bits()))
		bad.Values[j] = oracle.FromBits(dt, bits)
	}
	up, err := d.Upload(&bad)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Release()
	host := &target.Output{Rows: got.Rows, Cols: got.Cols, DType: got.DType, Values: vals}
	n := len(got.Rows)
	ra, rb := spec.Iota(n), spec.Iota(n)
	r.Shuffle(n, func(i, j int) { ra[i], ra[j] = ra[j], ra[i]; rb[i], rb[j] = rb[j], rb[i] })
	for _, cdt := range []oracle.DType{dt, oracle.BF16} {
		dev, err := got.Device.CompareRows(up, ra, rb, cdt)
		if err != nil {
			t.Fatal(err)
		}
		hostDiffs := target.CompareHost(host, &bad, ra, rb, cdt)
		for i := range hostDiffs {
			// compare_rows counts a +0 against -0 as a differing column
			// (Count, FirstCol) but does not flag it (target.DeviceOutput)
			hostDiffs[i].SignedZero = false
			// nor a non-finite column (NaN counts the largest ulps)
			hostDiffs[i].NonFinite = false
		}
		sortDiffs(dev)
		sortDiffs(hostDiffs)
		if fmt.Sprint(dev) != fmt.Sprint(hostDiffs) {
			t.Fatalf("compare in %s: device %+v, host %+v", cdt, dev, hostDiffs)
		}
	}
}

func sortDiffs(ds []target.RowDiff) {
	slices.SortFunc(ds, func(a, b target.RowDiff) int { return a.PosA - b.PosA })
}

// TestDecodeNegativeZero is the case of the oracle's fix 448de4e: with tile
// 1, scores 0 then 200 and values -1 then -0, the online softmax ends with
// acc = -0; the decode combine must start from -0 so that fma(1, -0, -0)
// keeps it, as prefill does (from +0 it would come out +0).
func TestDecodeNegativeZero(t *testing.T) {
	d := device(t)
	negZero := float32(math.Copysign(0, -1))
	in := &oracle.DecodeInput{Q: []float32{1}, K: [][]float32{{0, 200}}, V: [][]float32{{-1, negZero}},
		Heads: 1, KVHeads: 1, HeadDim: 1, Out: oracle.FP32}
	b := &target.Batch{Op: spec.OpAttnDecode, In: oracle.FP32, Out: oracle.FP32, Input: in}
	for _, splits := range []int{1, 2} {
		s := oracle.AttentionSchedule{Tile: 1, Splits: splits}
		want, err := oracle.Decode(*in, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		o, err := d.Run(b, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := o.Device.Fetch([]int{0})
		if err != nil {
			t.Fatal(err)
		}
		if math.Float32bits(got[0]) != math.Float32bits(want[0]) {
			t.Errorf("splits %d: gpu %08x, oracle %08x", splits, math.Float32bits(got[0]), math.Float32bits(want[0]))
		}
		if splits == 1 && math.Float32bits(want[0]) != 0x80000000 {
			t.Errorf("oracle gives %08x, the test expects -0 (did the oracle change?)", math.Float32bits(want[0]))
		}
	}
}
