package gen

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// decile returns the decile of 1..top that n is in: d with
// ⌊d·top/10⌋ < n <= ⌊(d+1)·top/10⌋, as Tokens' decile part draws them.
func decile(n, top int) int {
	for d := 0; d < 10; d++ {
		if n <= (d+1)*top/10 {
			return d
		}
	}
	return 9
}

// histogram draws n sizes with draw and returns the count per decile of
// 1..top, failing on a size outside 1..top.
func histogram(t *testing.T, n, top int, draw func() int) [10]int {
	t.Helper()
	var h [10]int
	for range n {
		v := draw()
		if v < 1 || v > top {
			t.Fatalf("drew %d, want 1..%d", v, top)
		}
		h[decile(v, top)]++
	}
	return h
}

// histogramText renders h as one line per decile with a bar.
func histogramText(h [10]int, top int) string {
	var b strings.Builder
	total := 0
	for _, c := range h {
		total += c
	}
	for d, c := range h {
		fmt.Fprintf(&b, "  %5d..%-5d %6d %5.1f%% %s\n", d*top/10+1, (d+1)*top/10, c,
			100*float64(c)/float64(total), strings.Repeat("#", c*200/total))
	}
	return b.String()
}

// TestTokensDeciles draws 2000 sizes per maximum (fixed seed) and wants
// every decile of 1..max to hold at least 2.5% of them: the decile part
// alone gives each 4% in expectation (80 of 2000; 50 is 3.4 standard
// deviations below), so a draw that leaves a decile out fails.
func TestTokensDeciles(t *testing.T) {
	for _, top := range []int{8192, 4096, 512, 100, 10} {
		r := rand.New(rand.NewSource(int64(top)))
		const n = 2000
		h := histogram(t, n, top, func() int { return Tokens(r, top) })
		t.Logf("Tokens over 1..%d, %d draws:\n%s", top, n, histogramText(h, top))
		for d, c := range h {
			if c < n/40 {
				t.Errorf("max %d: decile %d holds %d of %d draws, want >= %d", top, d, c, n, n/40)
			}
		}
	}
	r := rand.New(rand.NewSource(1))
	for _, top := range []int{1, 2, 3} {
		for range 100 {
			if v := Tokens(r, top); v < 1 || v > top {
				t.Fatalf("Tokens(%d) = %d", top, v)
			}
		}
	}
}

// TestTokensThresholds wants the dispatch thresholds among the draws: the
// multiples of 32 and 64 and their neighbours, and the named sizes.
func TestTokensThresholds(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	seen := map[int]int{}
	for range 5000 {
		seen[Tokens(r, 8192)]++
	}
	mult := 0
	for v, c := range seen {
		if (v+1)%32 <= 2 {
			mult += c
		}
	}
	// 32-multiples ±1 are 3/32 of a uniform draw; the threshold part alone
	// gives 10% of the draws there.
	if mult < 5000*15/100 {
		t.Errorf("%d of 5000 draws at a multiple of 32 plus -1, 0 or +1, want >= 15%%", mult)
	}
	for _, v := range []int{928, 2274, 4548, 4096, 132 * 7} {
		if seen[v]+seen[v-1]+seen[v+1] == 0 {
			t.Errorf("no draw at %d or its neighbours", v)
		}
	}
}

// TestSpread spreads cases of every op and relation at a model's inner
// sizes and wants the inner sizes, dtypes and eps kept, the batch
// dimensions in 1..max_tokens (a pad above the rows), and every case that
// fits spec.MaxElements valid.
func TestSpread(t *testing.T) {
	const top = 8192
	r := rand.New(rand.NewSource(3))
	inner := func(c spec.Case) spec.Case {
		c.Shape.Rows, c.Shape.Seqs, c.Shape.SeqLen, c.Shape.KV, c.Shape.KVLens, c.Rel = 0, 0, 0, 0, nil, spec.RelParams{}
		return asBoundary(c) // the batch decides sensitive (Sensitive)
	}
	for _, op := range spec.Ops {
		for _, rel := range spec.Relations {
			fit := 0
			for range 50 {
				c := Case(r, op, rel)
				switch op {
				case spec.OpRMSNorm:
					c.Shape.Hidden = 4096
				case spec.OpAttnDecode, spec.OpAttnPrefill:
					c.Shape.Heads, c.Shape.KVHeads, c.Shape.HeadDim = 32, 8, 128
				}
				before := inner(c)
				Spread(r, &c, top)
				if got := inner(c); !equalCase(got, before) {
					t.Fatalf("%s %s: inner sizes or dtypes changed: %+v -> %+v", op, rel, before, got)
				}
				if op == spec.OpAttnPrefill {
					if tok := c.Shape.Seqs * c.Shape.SeqLen; c.Shape.Seqs > 8 || tok < 1 || tok > top+7 {
						t.Fatalf("prefill %d x %d tokens, want 1..8 sequences of <= %d tokens", c.Shape.Seqs, c.Shape.SeqLen, top)
					}
				} else if c.Shape.Rows < 1 || c.Shape.Rows > top || c.Rel.Batch > top {
					t.Fatalf("%s %s: rows %d batch %d, want 1..%d", op, rel, c.Shape.Rows, c.Rel.Batch, top)
				}
				if c.Elements() > spec.MaxElements {
					continue
				}
				fit++
				if err := c.Validate(); err != nil {
					t.Fatalf("%s %s: %v: %+v", op, rel, err, c)
				}
			}
			if fit == 0 {
				t.Errorf("%s %s: no spread case fits spec.MaxElements", op, rel)
			}
		}
	}
}

func equalCase(a, b spec.Case) bool {
	return a.Op == b.Op && a.Relation == b.Relation && a.In == b.In && a.Out == b.Out && a.Compare == b.Compare &&
		a.Eps == b.Eps && a.Dist == b.Dist && a.Seed == b.Seed &&
		a.Shape.Hidden == b.Shape.Hidden && a.Shape.N == b.Shape.N && a.Shape.Vocab == b.Shape.Vocab &&
		a.Shape.Heads == b.Shape.Heads && a.Shape.KVHeads == b.Shape.KVHeads && a.Shape.HeadDim == b.Shape.HeadDim &&
		slices.Equal(a.Shape.KVLens, b.Shape.KVLens)
}
