package boundary_test

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/internal/cctest"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// ccNudge is one table row of TestCMatchesGo: rows of an RMSNorm case of
// dist, nudged with schedule s.
type ccNudge struct {
	in, out oracle.DType
	hidden  int
	dist    spec.Dist
	eps     float32
	s       oracle.RMSNormSchedule
}

// TestCMatchesGo compiles testdata/driver.c, which nudges RMSNorm and GEMM
// rows through gpu/kernels/nudge.cuh (the header the CUDA kernel nudge.cu
// includes), with the system C compiler and no contraction, and compares
// every nudged row's bits, and the Score of its outputs (the scan's
// objective, which rarely decides a row), with RMSNormRows.Nudge's and
// Score's: every input and output
// dtype, hidden sizes from the smallest nudged (8) past the oracle's
// thread count and vector width and not multiples of them, odd and even
// rows, both scale orders, other thread counts and warp orders than the
// oracle's, and rows of other distributions (zeros, subnormals, ties) in
// the probes; and GEMM rows (GEMMRow) of every dtype pair, K from 4 past
// 4096, several columns. It proves the C arithmetic before it reaches a
// GPU. Skipped when cc is missing.
func TestCMatchesGo(t *testing.T) {
	bin := cctest.Build(t, filepath.Join("..", "gpu", "kernels"), filepath.Join("testdata", "driver.c"),
		"the C version of the nudge")

	oracleS := target.OracleRMSNormSchedule
	other := oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 8, Vec: 1, Warp: oracle.WarpSequential}, Order: oracle.WeightedScale}
	single := oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 1, Vec: 8}, Order: oracle.ScaleThenWeight}
	var table []ccNudge
	for _, in := range []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32} {
		for _, out := range []oracle.DType{oracle.BF16, oracle.FP16} {
			for _, h := range []int{8, 9, 67, 128, 1000, 4096} {
				table = append(table, ccNudge{in, out, h, spec.DistNormal, 1e-6, oracleS})
			}
			table = append(table, ccNudge{in, out, 515, spec.DistNormal, 1e-5, other},
				ccNudge{in, out, 300, spec.DistNormal, 0, single})
			for _, d := range []spec.Dist{spec.DistSignedZero, spec.DistSubnormal, spec.DistTies, spec.DistConstant, spec.DistHeavy} {
				table = append(table, ccNudge{in, out, 96, d, 1e-6, oracleS})
			}
		}
	}

	var req bytes.Buffer
	var want []string
	var what []string
	for ti, tc := range table {
		c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
			In: spec.DType(tc.in.String()), Out: spec.DType(tc.out.String()), Dist: tc.dist, Seed: uint64(1000 + ti),
			Eps: tc.eps, Shape: spec.Shape{Rows: 8, Hidden: tc.hidden}}
		b, err := inputs.Of(c)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		r := b.Input.(*oracle.RMSNormInput)
		rows := boundary.NewRMSNormRows(r.W, r.Eps, tc.in, tc.out, tc.s)
		probes := rows.Probes()
		if len(probes) == 0 {
			continue
		}
		sr := tc.s.Reduce
		for i := range r.Rows {
			x := slices.Clone(r.X[i*tc.hidden : (i+1)*tc.hidden])
			odd := i%2 == 1
			fmt.Fprintf(&req, "r %d %d %d %d %d %d %d %d %08x %d\n", tc.in, tc.out, tc.s.Order, sr.Threads, sr.Vec,
				b2i(sr.Warp == oracle.WarpButterfly), b2i(odd), tc.hidden, math.Float32bits(tc.eps), len(probes))
			writeInts(&req, probes)
			writeBits(&req, tc.in, r.W)
			writeBits(&req, tc.in, x)
			rows.Nudge(x, odd)
			probe, err := oracle.NewRMSNormProbe(x, r.W, tc.eps, tc.s)
			if err != nil {
				t.Fatal(err)
			}
			score := boundary.Score(probe.Row(nil), tc.out, boundary.K)
			want = append(want, fmt.Sprintf("%s score %d", bitsLine(tc.in, x), score))
			what = append(what, fmt.Sprintf("%s->%s hidden %d %s %v row %d", tc.in, tc.out, tc.hidden, tc.dist, tc.s, i))
		}
	}

	// GEMM rows: every dtype pair, K from 4 past 4096, several columns.
	for _, in := range []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32} {
		for _, out := range []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32} {
			for ki, kk := range []int{4, 5, 33, 100, 1024, 4100} {
				n := []int{1, 3, 8, 64}[ki%4]
				c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpGEMM,
					In: spec.DType(in.String()), Out: spec.DType(out.String()), Dist: spec.DistNormal, Seed: uint64(7000 + ki),
					Shape: spec.Shape{Rows: 4, Hidden: kk, N: n}}
				b, err := inputs.Of(c)
				if err != nil {
					t.Fatal(err)
				}
				g := b.Input.(*oracle.GEMMInput)
				for i := range g.M {
					x := slices.Clone(g.X[i*kk : (i+1)*kk])
					col, odd := (i*5+ki)%n, i%2 == 1
					fmt.Fprintf(&req, "g %d %d %d %d %d %d\n", in, out, b2i(odd), kk, n, col)
					writeBits(&req, in, g.W)
					writeBits(&req, in, x)
					boundary.GEMMRow(x, g.W, n, col, in, out, target.OracleGEMMSchedule, odd)
					want = append(want, bitsLine(in, x))
					what = append(what, fmt.Sprintf("gemm %s->%s K %d n %d col %d row %d", in, out, kk, n, col, i))
				}
			}
		}
	}

	cctest.Compare(t, bin, &req, want, func(i int, got string) string {
		return fmt.Sprintf("%s: C and Go differ at value %s", what[i], firstDiff(got, want[i]))
	})
	t.Logf("%d nudged rows bit for bit", len(want))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func writeInts(w *bytes.Buffer, v []int) {
	for i, x := range v {
		if i > 0 {
			w.WriteByte(' ')
		}
		w.WriteString(strconv.Itoa(x))
	}
	w.WriteByte('\n')
}

// writeBits writes bitsLine(dt, v) and a newline.
func writeBits(w *bytes.Buffer, dt oracle.DType, v []float32) {
	w.WriteString(bitsLine(dt, v))
	w.WriteByte('\n')
}

// bitsLine is the bits of v in dt, hex, separated by spaces.
func bitsLine(dt oracle.DType, v []float32) string {
	var b strings.Builder
	for i, x := range v {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatUint(uint64(oracle.ToBits(dt, x)), 16))
	}
	return b.String()
}

// firstDiff is the index of the first differing value of two rows.
func firstDiff(a, b string) string {
	fa, fb := strings.Fields(a), strings.Fields(b)
	for i := range min(len(fa), len(fb)) {
		if fa[i] != fb[i] {
			return fmt.Sprintf("%d: C %s, Go %s", i, fa[i], fb[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(fa), len(fb))
}
