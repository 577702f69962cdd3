package gpu

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/internal/cctest"
)

// TestDigestCMatchesGo compiles testdata/digest_driver.c, which computes
// row digests through gpu/kernels/digest.cuh (the header digest_rows and
// check_steps include) as a block of B threads does, each thread's part
// added up, with the system C compiler, and checks every digest against
// external.RowDigest: 16- and 32-bit words, rows of whole 16-byte vectors
// and not (odd and even lengths, shorter than a vector, longer than a
// block's round of loads), read in vectors and word by word, blocks of
// 32 and 128 threads. It proves the kernels' arithmetic before it
// reaches a GPU (TestDigestRowsOnGPU checks the device). Skipped when cc
// is missing.
func TestDigestCMatchesGo(t *testing.T) {
	bin := cctest.Build(t, "kernels", filepath.Join("testdata", "digest_driver.c"), "the C version of the row digest")
	rng := rand.New(rand.NewPCG(1, 2))
	var req bytes.Buffer
	var want, what []string
	for _, ws := range []int{2, 4} {
		for _, n := range []int{1, 2, 3, 7, 8, 9, 64, 130, 515, 4096, 4097, 8192} {
			for _, b := range []int{32, 128} {
				for _, fill := range []string{"random", "max", "zero"} {
					words := make([]uint32, n)
					for j := range words {
						switch fill {
						case "random":
							words[j] = rng.Uint32()
						case "max":
							words[j] = ^uint32(0)
						}
						if ws == 2 {
							words[j] &= 0xffff
						}
					}
					vecs := []int{0}
					if n*ws%16 == 0 {
						vecs = append(vecs, 1)
					}
					for _, vec := range vecs {
						fmt.Fprintf(&req, "%d %d %d %d\n", ws, vec, b, n)
						for _, w := range words {
							fmt.Fprintf(&req, "%x ", w)
						}
						req.WriteByte('\n')
						want = append(want, fmt.Sprintf("%016x", external.RowDigest(words)))
						what = append(what, fmt.Sprintf("%d-byte words, %d of them (%s), vectors %d, %d threads", ws, n, fill, vec, b))
					}
				}
			}
		}
	}
	cctest.Compare(t, bin, &req, want, func(i int, got string) string {
		return fmt.Sprintf("%s: C digest %s, RowDigest %s", what[i], got, want[i])
	})
	t.Logf("%d rows digested as RowDigest does", len(want))
}
