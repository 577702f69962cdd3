package moerouter

import (
	"fmt"
	"math"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/moeroute"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Op is the op moe_router.
type Op struct{}

var _ ops.Op = Op{}

// DistSensitive is the draw whose logits' top-k boundary is brought
// within an ulp or two (SensitiveRow).
const DistSensitive = "sensitive"

// Record: a row is a token; hidden, experts and top_k default to
// Qwen3-30B-A3B's (2048, 128, 8); hidden states are bf16 (the default)
// or fp32.
func (Op) Record() ops.Record {
	return ops.Record{
		Name: Name, Item: "token",
		Dims: []ops.Dim{{Name: DimHidden, Default: 2048}, {Name: moeroute.DimExperts, Default: 128},
			{Name: moeroute.DimTopK, Default: 8}},
		In:    []oracle.DType{oracle.BF16, oracle.FP32},
		Dists: []string{DistSensitive, string(spec.DistNormal)},
	}
}

// Columns are moe_route's: expert_ids and weights.
func (Op) Columns(s ops.Shape) ([]ops.Column, error) {
	if _, _, _, err := dims(s); err != nil {
		return nil, err
	}
	return (moeroute.Op{}).Columns(s)
}

// Work counts a row's fp32 operations: H·E fma steps and moe_route's.
func (Op) Work(s ops.Shape) int64 {
	return 2*int64(s[DimHidden])*int64(s[moeroute.DimExperts]) + (moeroute.Op{}).Work(s)
}

// Seeded returns the tokens of keys (values' rows of tensor TensorX for
// d.Dist; DistSensitive: normal rows made sensitive by SensitiveRow) with
// the weights of d.Seed.
func (Op) Seeded(d ops.Draw, keys []uint64) (ops.Input, error) {
	h, e, k, err := dims(d.Shape)
	if err != nil {
		return nil, err
	}
	if err := checkIn(d.DType); err != nil {
		return nil, err
	}
	w, err := Weights(d.Seed, h, e)
	if err != nil {
		return nil, fmt.Errorf("moe_router: %w", err)
	}
	rows, err := ops.SeededRowsSensitive(d, TensorX, h, keys, DistSensitive, func(x []float32, key uint64) error {
		if key%4 == 3 {
			return nil // left as drawn
		}
		return SensitiveRow(x, w, e, k, d.DType)
	})
	if err != nil {
		return nil, fmt.Errorf("moe_router: %w", err)
	}
	return &Batch{Rows: rows, W: w}, nil
}

// SensitiveRow moves hidden states x (values of dtype d) so that their
// logits under split_k=1 put the k-th and (k+1)-th largest within an ulp
// or two (often equal): a few rounds of, for the two experts a and b at
// the boundary, the one component x[h] (of all H) whose move to
// Round(d, x[h] - g/(W[h][a]-W[h][b])) leaves the least computed gap g =
// l[a] - l[b], until g is 0 or no move shrinks it. A row with k = E has
// no boundary and is left as drawn.
func SensitiveRow(x, w []float32, e, k int, d oracle.DType) error {
	h := len(x)
	if k >= e {
		return nil
	}
	b := &Batch{Rows: &ops.Rows{Shape: ops.Shape{DimHidden: h, moeroute.DimExperts: e, moeroute.DimTopK: k}, DType: d, Cols: h, Values: x}, W: w}
	for range 4 {
		l, err := Logits(b, Policy{SplitK: 1})
		if err != nil {
			return err
		}
		hi, lo := boundary(l, k)
		g := float64(l[hi]) - float64(l[lo])
		if g == 0 {
			return nil
		}
		best, bestX, bestR := -1, float32(0), math.Abs(g)
		for c := range h {
			dw := float64(w[c*e+hi]) - float64(w[c*e+lo])
			if dw == 0 {
				continue
			}
			nx := oracle.Round(d, float32(float64(x[c])-g/dw))
			if r := math.Abs(g + (float64(nx)-float64(x[c]))*dw); r < bestR && !math.IsInf(float64(nx), 0) {
				best, bestX, bestR = c, nx, r
			}
		}
		if best < 0 {
			return nil
		}
		x[best] = bestX
	}
	return nil
}

// boundary is the experts of the k-th and (k+1)-th largest logits (lowest
// index first among equal ones).
func boundary(l []float32, k int) (kth, next int) {
	chosen := make([]bool, len(l))
	pick := func() int {
		best := -1
		for i, v := range l {
			if !chosen[i] && (best < 0 || v > l[best]) {
				best = i
			}
		}
		chosen[best] = true
		return best
	}
	for range k - 1 {
		pick()
	}
	return pick(), pick()
}

func checkIn(dt oracle.DType) error {
	if dt != oracle.FP32 && dt != oracle.BF16 {
		return fmt.Errorf("moe_router: hidden states of dtype %s, want bf16 or fp32", dt)
	}
	return nil
}

// Explicit returns rows of hidden values, each a value of dt, with the
// router weights of seed 0.
func (Op) Explicit(s ops.Shape, dt oracle.DType, vals []float32) (ops.Input, error) {
	h, e, _, err := dims(s)
	if err != nil {
		return nil, err
	}
	if err := checkIn(dt); err != nil {
		return nil, err
	}
	rows, err := ops.ExplicitRows(s, dt, h, vals)
	if err != nil {
		return nil, err
	}
	w, err := Weights(0, h, e)
	if err != nil {
		return nil, err
	}
	return &Batch{Rows: rows, W: w}, nil
}

// Reference routes every token of in with policy (ParsePolicy's form).
func (Op) Reference(in ops.Input, policy string) (*ops.Output, error) {
	p, err := ParsePolicy(policy)
	if err != nil {
		return nil, err
	}
	return route(in, func(int) Policy { return p })
}

// Words are moe_route's words read from the tokens' logits under
// split_k=1: which tokens changed experts and why (a tie, a near-tie
// within n ulps, a logit drift larger than the boundary's gap), and how
// many kept their experts with other weights.
func (Op) Words(in ops.Input, want, got *ops.Output, rows []int) string {
	b, ok := in.(*Batch)
	if !ok {
		return fmt.Sprintf("%d rows differ", len(rows))
	}
	l, err := Logits(b, Policy{SplitK: 1})
	if err != nil {
		return fmt.Sprintf("%d rows differ (logits: %v)", len(rows), err)
	}
	_, e, _, _ := dims(b.Shape)
	logits := &ops.Rows{Shape: b.Shape, DType: oracle.FP32, Cols: e, Values: l}
	return (moeroute.Op{}).Words(logits, want, got, rows)
}

// target is a CPU router named name (about: what it models) that
// declares split_k=1 and runs its GEMM at at(tokens), the schedule it
// takes at a batch of that many tokens.
func target(name, about string, at func(items int) Policy) ops.Target {
	return &ops.PolicyTarget[Policy]{Of: Op{}, Called: name, About: about, Declares: Policy{SplitK: 1},
		Claims: name == OracleName, At: at, Compute: route}
}

// Target names.
const (
	OracleName  = "oracle-moe_router"
	SplitKName  = "drift-moe-router-splitk-by-m"
	SplitKUpTo  = 64 // the drift model's split-K 4 covers 1..SplitKUpTo tokens
	SplitKSmall = 4
)

// Targets are the oracle (split_k=1 at every batch size) and a router
// whose GEMM takes target.GEMMSplitKByM's policy.
func (Op) Targets() []ops.Target {
	return []ops.Target{
		target(OracleName, "the CPU oracle: router GEMM with split_k=1, then moe_route's default policy; invariant by construction",
			func(int) Policy { return Policy{SplitK: 1} }),
		target(SplitKName, fmt.Sprintf("a router GEMM whose split-K is chosen by M, as cuBLAS's heuristic (drift-gemm-splitk-by-m): split-K %d for up to %d tokens, none above; logits move by ulps and a token at a near-tie changes experts", SplitKSmall, SplitKUpTo),
			func(n int) Policy {
				if n <= SplitKUpTo {
					return Policy{SplitK: SplitKSmall}
				}
				return Policy{SplitK: 1}
			}),
	}
}
