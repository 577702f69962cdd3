package external

import (
	"context"
	"fmt"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// numpyTarget starts the NumPy adapter for op (extra args such as --blas).
func numpyTarget(t *testing.T, op spec.Op, args ...string) *Target {
	t.Helper()
	tg, err := New(adapterCmd(t, "adapters/numpy_ops.py", append([]string{string(op)}, args...)...), op, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// testCase is a small case of op: shapes past warp and tile edges, GQA.
func testCase(op spec.Op, in, out spec.DType, dist spec.Dist, seed uint64) spec.Case {
	c := spec.Case{Version: spec.CaseVersion, Op: op, In: in, Out: out, Dist: dist, Seed: seed, Eps: 1e-6,
		GenVersion: spec.GeneratorVersion}
	switch op {
	case spec.OpRMSNorm:
		c.Shape = spec.Shape{Rows: 37, Hidden: 257}
	case spec.OpGEMM:
		c.Shape = spec.Shape{Rows: 19, Hidden: 65, N: 23}
	case spec.OpLogProb:
		c.Shape = spec.Shape{Rows: 17, Vocab: 1000}
	case spec.OpAttnPrefill:
		c.Shape = spec.Shape{Seqs: 2, SeqLen: 70, Heads: 4, KVHeads: 2, HeadDim: 16}
	case spec.OpAttnDecode:
		c.Shape = spec.Shape{Rows: 5, KVLens: []int{1, 17, 49, 130, 64}, Heads: 4, KVHeads: 1, HeadDim: 32}
	}
	return c
}

// diff compares two outputs row by row in dtype dt: the number of
// differing values (by bits), the largest ulp distance and the first
// difference in words.
func diff(dt oracle.DType, a, b *target.Output) (n int, maxULPs uint64, first string) {
	if len(a.Values) != len(b.Values) {
		return -1, 0, fmt.Sprintf("%d values vs %d", len(a.Values), len(b.Values))
	}
	for i := range a.Values {
		d := oracle.ULPDistance(dt, a.Values[i], b.Values[i])
		if d.SameBits {
			continue
		}
		n++
		maxULPs = max(maxULPs, d.ULPs)
		if first == "" {
			first = fmt.Sprintf("row %d col %d: %s (%s) vs %s (%s), %d ulps", a.Rows[i/a.Cols], i%a.Cols,
				oracle.Hex(dt, a.Values[i]), oracle.Decimal(a.Values[i]), oracle.Hex(dt, b.Values[i]), oracle.Decimal(b.Values[i]), d.ULPs)
		}
	}
	return n, maxULPs, first
}

func run(t *testing.T, tg target.Target, b *target.Batch, rows []int) *target.Output {
	t.Helper()
	o, err := tg.Run(context.Background(), b, rows)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestNumpyOracleParity runs every op of the NumPy adapter against the
// oracle: bitwise under the declared schedule (rmsnorm, gemm), within the
// declared ulp bound otherwise, in every input dtype and on the value
// distributions that take the fma emulation's slow path.
func TestNumpyOracleParity(t *testing.T) {
	type tc struct {
		op    spec.Op
		args  []string
		in    spec.DType
		dists []spec.Dist
	}
	exactDists := []spec.Dist{spec.DistNormal, spec.DistSubnormal, spec.DistNearOverflow, spec.DistTies, spec.DistSignedZero, spec.DistOutlier}
	tests := []tc{
		{spec.OpRMSNorm, nil, spec.BF16, exactDists},
		{spec.OpRMSNorm, nil, spec.FP16, exactDists},
		{spec.OpRMSNorm, nil, spec.FP32, exactDists},
		{spec.OpGEMM, nil, spec.BF16, exactDists},
		{spec.OpGEMM, nil, spec.FP32, exactDists},
		{spec.OpGEMM, []string{"--blas"}, spec.BF16, []spec.Dist{spec.DistNormal}},
		{spec.OpLogProb, nil, spec.BF16, append(exactDists, spec.DistHeavy, spec.DistConstant)},
		{spec.OpLogProb, nil, spec.FP32, exactDists},
		{spec.OpAttnPrefill, nil, spec.BF16, exactDists},
		{spec.OpAttnPrefill, nil, spec.FP32, []spec.Dist{spec.DistNormal, spec.DistNearOverflow}},
		{spec.OpAttnDecode, nil, spec.BF16, exactDists},
		{spec.OpAttnDecode, nil, spec.FP16, []spec.Dist{spec.DistNormal, spec.DistSubnormal}},
		{spec.OpAttnDecode, nil, spec.FP32, []spec.Dist{spec.DistNormal, spec.DistSignedZero}},
	}
	targets := map[string]*Target{}
	for _, tt := range tests {
		key := fmt.Sprint(tt.op, tt.args)
		tg := targets[key]
		if tg == nil {
			tg = numpyTarget(t, tt.op, tt.args...)
			targets[key] = tg
		}
		info := tg.Info()
		var ref target.Target
		var err error
		if info.Schedule != "" {
			ref, err = target.OracleFor(tg)
		} else {
			ref, err = target.Lookup(target.OracleName(tt.op))
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, dist := range tt.dists {
			t.Run(fmt.Sprintf("%s%v/%s/%s", tt.op, tt.args, tt.in, dist), func(t *testing.T) {
				b, err := inputs.Of(testCase(tt.op, tt.in, tt.in, dist, 7))
				if err != nil {
					t.Fatal(err)
				}
				rows := []int{b.Rows() - 1, 0, b.Rows() / 2} // a subset, out of order
				for _, sel := range [][]int{nil, rows} {
					got, want := run(t, tg, b, sel), run(t, ref, b, sel)
					if fmt.Sprint(got.Rows) != fmt.Sprint(want.Rows) || got.Cols != want.Cols || got.DType != want.DType {
						t.Fatalf("rows %v cols %d %s, oracle gives rows %v cols %d %s", got.Rows, got.Cols, got.DType, want.Rows, want.Cols, want.DType)
					}
					n, ulps, first := diff(got.DType, got, want)
					if info.Schedule != "" && n != 0 {
						t.Fatalf("declares schedule %q but differs from its oracle in %d of %d values (max %d ulps); first %s",
							info.Schedule, n, len(got.Values), ulps, first)
					}
					if ulps > info.ULPBound {
						t.Fatalf("declares ulp bound %d but is %d ulps from the oracle (%d of %d values differ); first %s",
							info.ULPBound, ulps, n, len(got.Values), first)
					}
					if sel == nil {
						t.Logf("%s: %d of %d values differ from the oracle, max %d ulps (%s)", info.Name, n, len(got.Values), ulps, got.DType)
					}
				}
			})
		}
	}
}

// TestNumpyBatchInvariance measures whether the NumPy adapter's rows depend
// on the batch: the first rows of a case computed in a small batch and in a
// large one (the generator gives shared rows the same bits) must be
// bitwise equal, as every op of the adapter claims (invariant=true).
func TestNumpyBatchInvariance(t *testing.T) {
	type tc struct {
		op          spec.Op
		args        []string
		small, big  spec.Shape
		sharedRows  int
		invariantOK bool
	}
	tests := []tc{
		{spec.OpRMSNorm, nil, spec.Shape{Rows: 7, Hidden: 512}, spec.Shape{Rows: 300, Hidden: 512}, 7, true},
		{spec.OpGEMM, nil, spec.Shape{Rows: 3, Hidden: 96, N: 40}, spec.Shape{Rows: 129, Hidden: 96, N: 40}, 3, true},
		{spec.OpGEMM, []string{"--blas"}, spec.Shape{Rows: 3, Hidden: 512, N: 256}, spec.Shape{Rows: 300, Hidden: 512, N: 256}, 3, true},
		{spec.OpLogProb, nil, spec.Shape{Rows: 3, Vocab: 5000}, spec.Shape{Rows: 200, Vocab: 5000}, 3, true},
		{spec.OpAttnPrefill, nil, spec.Shape{Seqs: 1, SeqLen: 40, Heads: 4, KVHeads: 2, HeadDim: 64},
			spec.Shape{Seqs: 6, SeqLen: 40, Heads: 4, KVHeads: 2, HeadDim: 64}, 40 * 4, true},
		{spec.OpAttnDecode, nil, spec.Shape{Rows: 2, KV: 100, Heads: 8, KVHeads: 2, HeadDim: 64},
			spec.Shape{Rows: 64, KV: 100, Heads: 8, KVHeads: 2, HeadDim: 64}, 2 * 8, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.op, tt.args), func(t *testing.T) {
			tg := numpyTarget(t, tt.op, tt.args...)
			c := testCase(tt.op, spec.BF16, spec.BF16, spec.DistNormal, 11)
			c.Shape = tt.small
			small, err := inputs.Of(c)
			if err != nil {
				t.Fatal(err)
			}
			c.Shape = tt.big
			big, err := inputs.Of(c)
			if err != nil {
				t.Fatal(err)
			}
			shared := make([]int, tt.sharedRows)
			for i := range shared {
				shared[i] = i
			}
			a, b := run(t, tg, small, shared), run(t, tg, big, shared)
			n, ulps, first := diff(a.DType, a, b)
			t.Logf("%s: %d shared rows, %d of %d values differ between %+v and %+v (max %d ulps)",
				tg.Info().Name, tt.sharedRows, n, len(a.Values), tt.small, tt.big, ulps)
			if n != 0 && tg.Info().Invariant {
				t.Fatalf("%s claims invariance but the batch changes its rows: %s", tg.Info().Name, first)
			}
		})
	}
}
