package boundary

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTopByMagnitude: the one-pass selection is the stable sort's prefix
// on vectors with ties, signed zeros, Inf, NaN (the fallback) and skips.
func TestTopByMagnitude(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 20_000 {
		v := make([]float32, 1+r.IntN(40))
		for j := range v {
			switch r.IntN(6) {
			case 0:
				v[j] = float32(r.IntN(3) - 1) // ties
			case 1:
				v[j] = float32(math.Copysign(0, float64(r.IntN(2)-1)))
			case 2:
				if i%10 == 0 {
					v[j] = float32(math.NaN())
				} else {
					v[j] = float32(math.Inf(r.IntN(2)*2 - 1))
				}
			default:
				v[j] = float32(r.NormFloat64())
			}
		}
		var skip []int
		if r.IntN(2) == 0 {
			skip = []int{r.IntN(len(v))}
		}
		k := 1 + r.IntN(8)
		all := byMagnitude(v, skip...)
		want := all[:min(k, len(all))]
		if got := topByMagnitude(v, k, skip...); !slices.Equal(got, want) {
			t.Fatalf("v %v k %d skip %v: top %v, sorted prefix %v", v, k, skip, got, want)
		}
	}
}
