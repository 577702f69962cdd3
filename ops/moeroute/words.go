package moeroute

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
)

// NearTieULPs is the widest gap, in ulps of the logits' dtype, between
// the k-th and (k+1)-th largest logits that Words calls a near-tie.
const NearTieULPs = 4

// Cause is why a token's experts changed, read from its logits at the
// top-k boundary (the k-th and (k+1)-th largest).
type Cause struct {
	// ULPs is the distance of the two boundary logits in ulps of the
	// logits' dtype: 0 is a tie, 1..NearTieULPs a near-tie, more a drift
	// larger than the boundary's gap (a logit drift).
	ULPs uint64
}

func (c Cause) String() string {
	switch {
	case c.ULPs == 0:
		return "a tie"
	case c.ULPs <= NearTieULPs:
		return fmt.Sprintf("a near-tie (within %d ulp of the k-th logit)", c.ULPs)
	}
	return fmt.Sprintf("a logit drift (the k-th and (k+1)-th logits are %d ulps apart)", c.ULPs)
}

// Boundary is the cause read from row x of dtype d at k: the distance of
// its k-th and (k+1)-th largest logits (0 when k covers every expert).
func Boundary(x []float32, k int, d oracle.DType) Cause {
	if k >= len(x) {
		return Cause{}
	}
	o := rank(x)
	return Cause{ULPs: oracle.ULPDistance(d, x[o[k-1]], x[o[k]]).ULPs}
}

// Changed reports whether row r of a and row q of b chose different sets
// of experts.
func Changed(a *ops.Output, r int, b *ops.Output, q int) bool {
	k := a.Columns[ColIDs].Width
	x, y := make([]int32, k), make([]int32, k)
	for j := range k {
		x[j], y[j] = a.Int32(ColIDs, r, j), b.Int32(ColIDs, q, j)
	}
	slices.Sort(x)
	slices.Sort(y)
	return !slices.Equal(x, y)
}

// Words says which tokens changed experts and why (a tie, a near-tie, a
// logit drift), how many kept their experts with other weights (or
// order), and the first token that changed:
//
//	"5 of 64 tokens differ: 3 (4.7%) changed experts (2 by a tie, 1 by a
//	near-tie (within 1 ulp of the k-th logit)), 2 kept their experts with
//	other weights; first: token 4: experts [3 17] -> [3 90]"
func (Op) Words(in ops.Input, want, got *ops.Output, rows []int) string {
	b, ok := in.(*ops.Rows)
	if !ok || len(rows) == 0 {
		return fmt.Sprintf("%d rows differ", len(rows))
	}
	k := want.Columns[ColIDs].Width
	causes := map[string]int{}
	var order []string
	changed, first := 0, -1
	for _, r := range rows {
		if !Changed(want, r, got, r) {
			continue
		}
		changed++
		if first < 0 {
			first = r
		}
		c := Boundary(b.Row(r), k, b.DType).String()
		if causes[c] == 0 {
			order = append(order, c)
		}
		causes[c]++
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%d of %d tokens differ: %d (%.1f%%) changed experts", len(rows), want.Rows, changed, 100*float64(changed)/float64(want.Rows))
	if changed > 0 {
		parts := make([]string, len(order))
		for i, c := range order {
			parts[i] = fmt.Sprintf("%d by %s", causes[c], c)
		}
		fmt.Fprintf(&s, " (%s)", strings.Join(parts, ", "))
	}
	if kept := len(rows) - changed; kept > 0 {
		fmt.Fprintf(&s, ", %d kept their experts with other weights or order", kept)
	}
	if first >= 0 {
		fmt.Fprintf(&s, "; first: token %d: experts %v -> %v", first, ids(want, first), ids(got, first))
	}
	return s.String()
}

// ids is row r's expert ids.
func ids(o *ops.Output, r int) []int32 {
	k := o.Columns[ColIDs].Width
	x := make([]int32, k)
	for j := range k {
		x[j] = o.Int32(ColIDs, r, j)
	}
	return x
}
