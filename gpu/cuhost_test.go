package gpu

import (
	"bufio"
	"fmt"
	"math"
	"math/rand"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/moeroute"
	"github.com/bitparity/bitparity/ops/quantfp8"
	"github.com/bitparity/bitparity/oracle"
)

// buildHost compiles testdata/cuhost/driver.cpp, which includes a kernel
// file of kernels/ through testdata/cuhost/shim.h, as host C++ with no
// contraction of a*b+c, and returns the binary; it skips t without g++.
func buildHost(t *testing.T, driver string) string {
	t.Helper()
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skipf("no C++ compiler (g++): the host build of %s is not checked here", driver)
	}
	bin := filepath.Join(t.TempDir(), "driver")
	build := exec.Command(cxx, "-std=c++17", "-O2", "-ffp-contract=off", "-Wall", "-Werror", "-Wno-unused-function",
		"-I", "kernels", "-I", filepath.Join("testdata", "cuhost"), "-x", "c++", "-o", bin, filepath.Join("testdata", "cuhost", driver))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", build.Args, err, out)
	}
	return bin
}

func runHost(t *testing.T, bin, stdin string) []string {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	return lines
}

// TestMoERouteHost runs kernels/moe_route.cu's own loop on the host
// (testdata/cuhost) against the oracle, both tie-breaks, on every draw at
// several shapes and on rows of equal logits, infinities and NaNs: the
// kernel's order of operations is the oracle's before it reaches a GPU
// (make test-gpu's TestMoERouteKernel then compares on the device).
func TestMoERouteHost(t *testing.T) {
	bin := buildHost(t, "moe_route.cpp")
	op := moeroute.Op{}
	keys := make([]uint64, 64)
	for i := range keys {
		keys[i] = uint64(i)
	}
	check := func(in *ops.Rows, what string) {
		k := in.Shape[moeroute.DimTopK]
		for tie, policy := range []string{"tie=lowest", "tie=highest"} {
			want, err := op.Reference(in, policy)
			if err != nil {
				t.Fatal(err)
			}
			var s strings.Builder
			fmt.Fprintf(&s, "%d %d %d %d\n", in.Items(), in.Cols, k, tie)
			for _, v := range in.Values {
				fmt.Fprintf(&s, "%d ", math.Float32bits(v))
			}
			got := runHost(t, bin, s.String())
			for r := range in.Items() {
				var w strings.Builder
				for j := range k {
					fmt.Fprintf(&w, "%d %d ", want.Int32(moeroute.ColIDs, r, j), math.Float32bits(want.FP32(moeroute.ColWeights, r, j)))
				}
				if r >= len(got) || got[r] != strings.TrimSpace(w.String()) {
					t.Fatalf("%s, %s, row %d: kernel %q, oracle %q", what, policy, r, got[min(r, len(got)-1)], w.String())
				}
			}
		}
	}
	for _, sh := range [][2]int{{128, 8}, {8, 2}, {33, 33}, {1, 1}} {
		s := ops.Shape{moeroute.DimExperts: sh[0], moeroute.DimTopK: sh[1]}
		for _, dist := range op.Record().Dists {
			in, err := op.Seeded(ops.Draw{Shape: s, DType: oracle.BF16, Dist: dist, Seed: 7}, keys)
			if err != nil {
				t.Fatal(err)
			}
			b := *in.(*ops.Rows)
			b.DType = oracle.FP32 // bf16 values, passed as fp32 bits: the driver reads fp32
			check(&b, fmt.Sprintf("%v %s", s, dist))
		}
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	in, err := op.Explicit(ops.Shape{moeroute.DimExperts: 4, moeroute.DimTopK: 2}, oracle.FP32, []float32{
		1, 1, 1, 1, 0, 2, 2, 0, -inf, 0, -inf, 0, inf, 0, inf, 1, nan, 3, nan, -1,
		0, float32(math.Copysign(0, -1)), 0, -1, nan, nan, nan, nan})
	if err != nil {
		t.Fatal(err)
	}
	check(in.(*ops.Rows), "explicit rows")
}

// TestFP8EncodeHost runs kernels/quant_fp8.cu's fp8_encode on the host
// against quantfp8.Encode, both formats, on random fp32 bit patterns,
// normal values across the formats' ranges and values within 2 ulps of
// every fp8 code's value (the rounding ties).
func TestFP8EncodeHost(t *testing.T) {
	bin := buildHost(t, "fp8_encode.cpp")
	r := rand.New(rand.NewSource(1))
	var xs []uint32
	for i := range 60000 {
		switch i % 3 {
		case 0:
			xs = append(xs, r.Uint32())
		case 1:
			xs = append(xs, math.Float32bits(float32(r.NormFloat64()*math.Ldexp(1, r.Intn(48)-28))))
		default:
			code := quantfp8.Decode(quantfp8.Format(i%2), uint8(r.Intn(256)))
			xs = append(xs, math.Float32bits(code)+uint32(r.Intn(5))-2)
		}
	}
	var s strings.Builder
	for _, b := range xs {
		fmt.Fprintf(&s, "%d\n", b)
	}
	got := runHost(t, bin, s.String())
	if len(got) != len(xs) {
		t.Fatalf("%d lines for %d values", len(got), len(xs))
	}
	bad := 0
	for i, b := range xs {
		x := math.Float32frombits(b)
		want := fmt.Sprintf("%d %d", quantfp8.Encode(quantfp8.E4M3, x), quantfp8.Encode(quantfp8.E5M2, x))
		if got[i] != want {
			if bad++; bad <= 5 {
				t.Errorf("%#08x (%g): kernel %s, Encode %s (e4m3 e5m2)", b, x, got[i], want)
			}
		}
	}
}
