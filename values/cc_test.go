package values

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bitparity/bitparity/internal/cctest"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// TestCMatchesGo compiles testdata/driver.c, which generates values through
// gpu/kernels/gen.cuh (the header the CUDA kernel gen.cu includes), with
// the system C compiler and no contraction, and compares its bits with
// Go's: N(u) for edge and random draws, and whole rows of every
// distribution and dtype over seeds, tensors, row keys (attention's
// (sequence, position) keys among them), scales and row lengths. It proves
// the C arithmetic before it reaches a GPU. Skipped when cc is missing.
func TestCMatchesGo(t *testing.T) {
	bin := cctest.Build(t, filepath.Join("..", "gpu", "kernels"), filepath.Join("testdata", "driver.c"),
		"the C version of generator 2")

	var req bytes.Buffer
	var want []string
	// N(u): edge draws (octave ends, the clamped octave, zero) and a stream.
	us := []uint64{0, 1, 2, 3, 1 << 62, 1<<62 - 1, 1 << 63, 1<<63 | 1, math.MaxUint64, math.MaxUint64 >> 1, 1 << 58, 1<<59 | 1<<58}
	for i := range uint64(20000) {
		us = append(us, Mix(i))
		us = append(us, Mix(i)>>(i%64)) // deep octaves
	}
	for _, u := range us {
		fmt.Fprintf(&req, "n %d\n", u)
		want = append(want, fmt.Sprintf("%016x", math.Float64bits(normal(u))))
	}
	// rows
	var rows []ccRow
	seeds := []uint64{0, 1, 0x5eed, math.MaxUint64}
	keys := []uint64{0, 1, 927, 3<<32 | 48}
	dists := []spec.Dist{spec.DistNormal, spec.DistHeavy, spec.DistOutlier, spec.DistConstant,
		spec.DistSignedZero, spec.DistSubnormal, spec.DistNearOverflow, spec.DistTies}
	for _, d := range dists {
		for _, dt := range []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32} {
			for si, seed := range seeds {
				for ki, key := range keys {
					sc := []float64{1, 0.25, 3, 1 / math.Sqrt(4096)}[(si+ki)%4]
					id := []uint64{TensorX, TensorQ, TensorK, TensorLogits}[ki]
					n := []int{1, 7, 64, 1000}[(si+2*ki)%4]
					rows = append(rows, ccRow{Tensor{Seed: seed, ID: id, Dist: d, DType: dt, Scale: sc}, key, n})
				}
			}
		}
	}
	for _, r := range rows {
		code, _ := DistCode(r.t.Dist)
		fmt.Fprintf(&req, "r %d %d %016x %d %d %d %d\n", code, r.t.DType, math.Float64bits(r.t.Scale), r.t.Seed, r.t.ID, r.key, r.n)
		vals := make([]float32, r.n)
		if err := r.t.Row(vals, r.key); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			want = append(want, strconv.FormatUint(uint64(oracle.ToBits(r.t.DType, v)), 16))
		}
	}

	cctest.Compare(t, bin, &req, want, func(i int, got string) string {
		return fmt.Sprintf("C %s, Go %s (%s)", got, want[i], describe(i, len(us), rows))
	})
	t.Logf("%d normals and %d values of %d rows bit for bit", len(us), len(want)-len(us), len(rows))
}

// ccRow is one row request: n values of tensor t at row key.
type ccRow struct {
	t   Tensor
	key uint64
	n   int
}

// describe names request line i: a normal draw or a value of a row.
func describe(i, normals int, rows []ccRow) string {
	if i < normals {
		return "N(u)"
	}
	i -= normals
	for _, r := range rows {
		if i < r.n {
			return fmt.Sprintf("%s %s seed %d tensor %d key %#x column %d of %d", r.t.Dist, r.t.DType, r.t.Seed, r.t.ID, r.key, i, r.n)
		}
		i -= r.n
	}
	return "?"
}
