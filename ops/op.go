package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/oracle"
)

// Shape holds an op's inner sizes by dimension name ("experts", "top_k",
// "hidden"); the batch dimension (its items) is not part of it.
type Shape map[string]int

// String writes s as "name=value" pairs sorted by name.
func (s Shape) String() string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, s[k])
	}
	return strings.Join(parts, " ")
}

// Record is what an op is: its name, what one row (item) is, the inner
// dimensions it reads, the input dtypes it takes and the draws it makes
// from a seed.
type Record struct {
	Name string // "moe_route"
	Item string // what one item (one row of the batch) is: "token"
	// Dims are the inner dimensions the op reads, each with the value a
	// scan takes when none is given.
	Dims []Dim
	// In lists the input dtypes the op takes, the default first.
	In []oracle.DType
	// Dists lists the input draws Seeded makes, the default first.
	Dists []string
}

// Dim is one inner dimension of an op and its default.
type Dim struct {
	Name    string
	Default int
}

// Draw names one seeded input: every value of item key is a pure function
// of (Seed, the op's tensor id, key, column) for the Dist and DType given.
type Draw struct {
	Shape Shape
	DType oracle.DType
	Dist  string
	Seed  uint64
}

// Op is the interface an op package implements.
type Op interface {
	// Record is the op's record.
	Record() Record
	// Columns are the compared output columns at shape s, in the order
	// Output holds them; an error names a dimension that is missing or out
	// of range.
	Columns(s Shape) ([]Column, error)
	// Work is the number of elementary fp32 operations one row costs at
	// shape s (the unit of a CPU cost model).
	Work(s Shape) int64
	// Seeded returns the batch whose item i is item keys[i] of draw d.
	Seeded(d Draw, keys []uint64) (Input, error)
	// Explicit returns the batch of explicit values: items of the op's row
	// width at shape s, each already of dtype dt.
	Explicit(s Shape, dt oracle.DType, values []float32) (Input, error)
	// Reference computes every row of in with the oracle loop of the
	// declared policy (the policy's String form; "" is the op's default).
	Reference(in Input, policy string) (*Output, error)
	// Targets are the op's CPU targets: its oracle first, then its drift
	// models (negative controls).
	Targets() []Target
	// Words says how rows (items of in) of got differ from want, in the
	// op's words ("3 of 64 tokens changed experts: 2 by a tie, ..."). want
	// and got hold the same items, in the order of in.
	Words(in Input, want, got *Output, rows []int) string
}

// Input is one batch of an op's inputs: Items items, each one row of the
// op's output. Only its op reads its values.
type Input interface {
	// Items is the number of items (rows) of the batch.
	Items() int
	// Gather returns the batch of items idx of this one, in that order
	// (an index may repeat).
	Gather(idx []int) (Input, error)
	// Replace returns a copy of this batch whose item at[i] is item i of
	// from, for every i: the neighbours' contents replaced, the batch size
	// kept.
	Replace(at []int, from Input) (Input, error)
}

// Target is an implementation of an op that runs a batch.
type Target interface {
	// Name is the target's name (`bitparity scan --target NAME`).
	Name() string
	// Op is the op it runs.
	Op() Op
	// Declared is the policy it declares: the oracle of that policy
	// (Op.Reference) must give its rows bit for bit.
	Declared() string
	// Models says which real kernel behaviour it reproduces; Invariant is
	// true for a target that claims every relation (the oracle), false for
	// a drift model (a negative control that must be found).
	Models() string
	Invariant() bool
	// Run computes every row of in.
	Run(ctx context.Context, in Input) (*Output, error)
}
