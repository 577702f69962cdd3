package moeroute

import (
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Op is the op moe_route.
type Op struct{}

var _ ops.Op = Op{}

// TensorLogits is the tensor id of the router logits in the seeded
// generator (package values' contract; ids 1..7 are the dense ops').
const TensorLogits uint64 = 0x6d6f65 // "moe"

// DistSensitive is the draw whose top-k boundary sits on a tie or within
// one ulp (SensitiveRow).
const DistSensitive = "sensitive"

// Record: a row is a token; experts and top_k default to Qwen3-30B-A3B's
// (128, 8); logits are fp32 (the default) or bf16.
func (Op) Record() ops.Record {
	return ops.Record{
		Name: Name, Item: "token",
		Dims:  []ops.Dim{{Name: DimExperts, Default: 128}, {Name: DimTopK, Default: 8}},
		In:    []oracle.DType{oracle.FP32, oracle.BF16},
		Dists: []string{DistSensitive, string(spec.DistNormal), string(spec.DistTies)},
	}
}

// Columns are expert_ids (top_k int32) and weights (top_k fp32).
func (Op) Columns(s ops.Shape) ([]ops.Column, error) {
	_, k, err := shape(s)
	if err != nil {
		return nil, err
	}
	return columns(k), nil
}

// Work counts a row's fp32 operations: max, exp, sum and divide over the
// experts (4E) and k selection passes over them (kE).
func (Op) Work(s ops.Shape) int64 {
	e, k := int64(s[DimExperts]), int64(s[DimTopK])
	return 4*e + k*e
}

// Seeded returns the rows of keys: values' draw of tensor TensorLogits for
// d.Dist, and for DistSensitive that draw (normal) made sensitive by
// SensitiveRow.
func (Op) Seeded(d ops.Draw, keys []uint64) (ops.Input, error) {
	e, k, err := shape(d.Shape)
	if err != nil {
		return nil, err
	}
	if err := checkIn(d.DType); err != nil {
		return nil, err
	}
	b, err := ops.SeededRowsSensitive(d, TensorLogits, e, keys, DistSensitive, func(x []float32, key uint64) error {
		SensitiveRow(x, k, d.DType, key)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("moe_route: %w", err)
	}
	return b, nil
}

// SensitiveRow moves the top-k boundary of row x (values of dtype d) onto
// a tie or a near-tie, by key % 4:
//
//	0     tie: the (k+1)-th largest logit set equal to the k-th
//	1, 2  near-tie: of the two, the one at the lower index set to the k-th
//	      logit v and the one at the higher index to the next d value
//	      above v, so the higher index wins by one ulp; any other logit
//	      equal to either moves one d value above the pair (ranked above
//	      it) or below v (ranked below)
//	3     left as drawn
//
// A row with k = experts has no boundary and is left as drawn.
func SensitiveRow(x []float32, k int, d oracle.DType, key uint64) {
	if k >= len(x) || key%4 == 3 {
		return
	}
	order := rank(x)
	i, j := order[k-1], order[k] // the k-th and (k+1)-th largest
	v := x[i]
	if key%4 == 0 {
		x[j] = v
		return
	}
	lo, hi := min(i, j), max(i, j)
	up := nextUp(d, v)
	x[lo], x[hi] = v, up
	for n, e := range order { // keep the pair alone at the boundary
		if e != lo && e != hi && (x[e] == v || x[e] == up) {
			if n < k-1 {
				x[e] = nextUp(d, up)
			} else {
				x[e] = -nextUp(d, -v)
			}
		}
	}
}

// rank is the expert indices by logit, largest first, lowest index first
// among equal logits.
func rank(x []float32) []int {
	order := spec.Iota(len(x))
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case x[a] > x[b]:
			return -1
		case x[a] < x[b]:
			return 1
		}
		return 0
	})
	return order
}

// Explicit returns rows of experts logits, each a value of dt.
func (Op) Explicit(s ops.Shape, dt oracle.DType, values []float32) (ops.Input, error) {
	e, _, err := shape(s)
	if err != nil {
		return nil, err
	}
	if err := checkIn(dt); err != nil {
		return nil, err
	}
	return ops.ExplicitRows(s, dt, e, values)
}

func checkIn(dt oracle.DType) error {
	if dt != oracle.FP32 && dt != oracle.BF16 {
		return fmt.Errorf("moe_route: logits of dtype %s, want fp32 or bf16", dt)
	}
	return nil
}

// Reference routes every row of in with policy (ParsePolicy's form).
func (Op) Reference(in ops.Input, policy string) (*ops.Output, error) {
	p, err := ParsePolicy(policy)
	if err != nil {
		return nil, err
	}
	return run(in, func(int) Policy { return p })
}

// run routes every row of in with the policy at(items) chooses.
func run(in ops.Input, at func(items int) Policy) (*ops.Output, error) {
	b, ok := in.(*ops.Rows)
	if !ok {
		return nil, fmt.Errorf("moe_route: a batch of %T, want router logits (*ops.Rows)", in)
	}
	_, k, err := shape(b.Shape)
	if err != nil {
		return nil, err
	}
	p := at(b.Items())
	o := ops.NewOutput(columns(k), b.Items())
	ids, w := make([]int32, k), make([]float32, k)
	for r := range b.Items() {
		Route(b.Row(r), p, ids, w)
		for j := range k {
			o.PutInt32(ColIDs, r, j, ids[j])
			o.PutFP32(ColWeights, r, j, w[j])
		}
	}
	return o, nil
}

// target is a CPU router named name (about: what it models) that
// declares the default policy and runs at(tokens), the policy it takes
// at a batch of that many tokens.
func target(name, about string, at func(items int) Policy) ops.Target {
	return &ops.PolicyTarget[Policy]{Of: Op{}, Called: name, About: about, Declares: Policy{},
		Claims: name == OracleName, At: at, Compute: run}
}

// Target names.
const (
	OracleName   = "oracle-moe_route"
	TieHighName  = "drift-moe-route-tie-high-128"
	PairwiseName = "drift-moe-route-sum-pairwise-64"
)

// Onsets of the drift models.
const (
	TieHighFrom  = 128
	PairwiseFrom = 64
)

// Targets are the oracle (the default policy at every batch size) and two
// drift models that declare the default policy.
func (Op) Targets() []ops.Target {
	def := Policy{}
	return []ops.Target{
		target(OracleName, "the CPU oracle with the default policy (tie=lowest sum=sequential), invariant by construction",
			func(int) Policy { return def }),
		target(TieHighName, fmt.Sprintf("a top-k whose path changes with the batch: ties broken lowest index first below %d tokens, highest index first from %d on (tie oracles differ between top-k kernels: NeMo-RL RFC #4039, vLLM #55514, torchtitan #3600)", TieHighFrom, TieHighFrom),
			func(n int) Policy {
				if n >= TieHighFrom {
					return Policy{Tie: TieHighest}
				}
				return def
			}),
		target(PairwiseName, fmt.Sprintf("a router softmax whose block shape follows the batch: the denominator summed sequentially below %d tokens, pairwise from %d on; weights move by ulps and a near-tie at the top-k boundary flips experts", PairwiseFrom, PairwiseFrom),
			func(n int) Policy {
				if n >= PairwiseFrom {
					return Policy{Sum: SumPairwise}
				}
				return def
			}),
	}
}
