package oracle

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/internal/golden"
)

var update = flag.Bool("update", false, "rewrite testdata/golden_*.json from the current oracle")

// goldenCases returns, per op, named outputs (hex bits in the output dtype)
// of fixed inputs under several schedules. The golden files pin the bits:
// a speed-up or refactor of the oracle must leave every one unchanged.
func goldenCases(t *testing.T) map[string]map[string][]string {
	t.Helper()
	must := func(out []float32, err error) []float32 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	reds := []Reduction{
		Sequential,
		{Threads: 4, Vec: 2, Warp: WarpSequential, Cross: CrossSequential},
		{Threads: 32, Vec: 4, Warp: WarpButterfly, Cross: CrossSequential},
		{Threads: 256, Vec: 8, Warp: WarpSequential, Cross: CrossTree},
		{Threads: 1024, Vec: 2, Warp: WarpButterfly, Cross: CrossTree},
		{Threads: 128, Vec: 1, Warp: WarpButterfly, Cross: CrossSequential},
	}
	g := map[string]map[string][]string{}

	rm := map[string][]string{}
	for _, c := range []struct {
		in, out      DType
		rows, hidden int
	}{{BF16, BF16, 5, 300}, {FP16, FP16, 3, 4096}, {FP32, FP32, 2, 777}} {
		in := rmsnormInput(newRNG(uint64(c.hidden)), c.in, c.out, c.rows, c.hidden)
		for _, red := range reds {
			for _, o := range []ScaleOrder{ScaleThenWeight, WeightedScale} {
				s := RMSNormSchedule{Reduce: red, Order: o}
				rm[fmt.Sprintf("%s->%s %dx%d %s", c.in, c.out, c.rows, c.hidden, s)] = hexes(c.out, must(RMSNorm(in, s, nil)))
			}
		}
	}
	g["rmsnorm"] = rm

	gm := map[string][]string{}
	for _, c := range []struct {
		in, out DType
		m, k, n int
	}{{BF16, BF16, 3, 130, 17}, {FP16, FP32, 2, 512, 9}, {FP32, FP16, 1, 33, 5}} {
		in := gemmInput(newRNG(uint64(c.k)), c.in, c.out, c.m, c.k, c.n)
		for _, s := range []GEMMSchedule{{SplitK: 1, Combine: CrossSequential}, {SplitK: 3, Combine: CrossSequential}, {SplitK: 4, Combine: CrossTree}, {SplitK: 8, Combine: CrossSequential}, {SplitK: 64, Combine: CrossTree}} {
			gm[fmt.Sprintf("%s->%s %dx%dx%d %s", c.in, c.out, c.m, c.k, c.n, s)] = hexes(c.out, must(GEMM(in, s, nil)))
		}
	}
	g["gemm"] = gm

	lp := map[string][]string{}
	for _, c := range []struct {
		in          DType
		rows, vocab int
		scale       float64
	}{{BF16, 4, 1000, 3}, {FP32, 3, 5000, 10}, {FP16, 2, 77, 1}} {
		in := logprobInput(newRNG(uint64(c.vocab)), c.in, c.rows, c.vocab, c.scale)
		for _, red := range reds {
			s := LogProbSchedule{Reduce: red}
			out, taps, err := LogProbTaps(in, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			vals := hexes(FP32, out)
			for _, tp := range taps {
				vals = append(vals, Hex(FP32, tp.Max), Hex(FP32, tp.SumExp))
			}
			lp[fmt.Sprintf("%s %dx%d %s", c.in, c.rows, c.vocab, s)] = vals
		}
	}
	g["logprob"] = lp

	at := map[string][]string{}
	pin := prefillInput(newRNG(70), BF16, BF16, 2, 70, 4, 2, 16)
	pin32 := prefillInput(newRNG(71), FP32, FP32, 1, 50, 2, 1, 64)
	for _, tile := range []int{1, 16, 48, 64, 128} {
		s := AttentionSchedule{Tile: tile, Splits: 1}
		at[fmt.Sprintf("prefill bf16 2x70 h4/2 d16 %s", s)] = hexes(BF16, must(Prefill(pin, s, nil)))
		at[fmt.Sprintf("prefill fp32 1x50 h2/1 d64 %s", s)] = hexes(FP32, must(Prefill(pin32, s, nil)))
	}
	din := decodeInput(newRNG(72), BF16, BF16, []int{0, 1, 49, 130, 300}, 4, 2, 16)
	din16 := decodeInput(newRNG(73), FP16, FP32, []int{64, 65, 257}, 8, 1, 32)
	for _, tile := range []int{16, 48, 64} {
		for _, splits := range []int{1, 2, 3, 7, 32} {
			s := AttentionSchedule{Tile: tile, Splits: splits}
			at[fmt.Sprintf("decode bf16 kv0/1/49/130/300 h4/2 d16 %s", s)] = hexes(BF16, must(Decode(din, s, nil)))
			at[fmt.Sprintf("decode fp16->fp32 kv64/65/257 h8/1 d32 %s", s)] = hexes(FP32, must(Decode(din16, s, nil)))
		}
	}
	g["attention"] = at

	el := map[string][]string{}
	r := newRNG(74)
	xs := make([]float32, 2000)
	for i := range xs {
		xs[i] = FromBits(FP32, r.Uint32())
	}
	var ex, lg []float32
	for _, x := range xs {
		ex = append(ex, Exp32(x))
		lg = append(lg, Log32(x))
	}
	el["exp32 of 2000 random bit patterns"] = hexes(FP32, ex)
	el["log32 of 2000 random bit patterns"] = hexes(FP32, lg)
	g["explog"] = el
	for _, m := range g {
		for k, v := range m {
			m[k] = digest(v)
		}
	}
	return g
}

// digest keeps the first 16 hex values of a long output and replaces the
// rest by their count and the SHA-256 of all values joined by commas, so
// that the golden files stay small but still pin every bit.
func digest(vals []string) []string {
	const keep = 16
	if len(vals) <= keep {
		return vals
	}
	sum := sha256.Sum256([]byte(strings.Join(vals, ",")))
	return append(vals[:keep:keep], fmt.Sprintf("n=%d", len(vals)), fmt.Sprintf("sha256=%x", sum))
}

// TestGolden pins the oracle's bits: every op under several schedules on
// fixed inputs must give exactly the bits in testdata/golden_*.json.
// Refresh with `go test ./oracle -run TestGolden -update` only when a change
// of bits is intended (and say so: CUDA kernels copy these loops).
func TestGolden(t *testing.T) {
	for op, got := range goldenCases(t) {
		golden.JSON(t, filepath.Join("testdata", "golden_"+op+".json"), got, *update)
	}
}
