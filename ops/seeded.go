package ops

import "github.com/bitparity/bitparity/spec"

// Tensor is the recipe of one seeded tensor: its id (values.TensorX and
// siblings), distribution and scale σ.
type Tensor struct {
	ID    uint64
	Dist  spec.Dist
	Scale float64
}

// Seeded makes a case's tensors from its seed for an op's FromSeed:
// fuzz's generator (values for gen_version 2, its row streams for 1) and
// the batch's items, which are the case's items by key (a relation's
// batch copies, moves and pads them).
type Seeded interface {
	// Items is the number of items of the batch; Item(i) the case's item
	// that item i is, and Filler(i) true when item i is a padding item.
	Items() int
	Item(i int) uint64
	Filler(i int) bool
	// PerItem returns rows·cols values of t, row r the row with key
	// key(r); nil (no error) in a lazy batch, whose targets make it.
	PerItem(t Tensor, rows, cols int, key func(r int) uint64) ([]float32, error)
	// Shared returns rows·cols values of t, row r with key r: a tensor
	// every item shares (weights), made in a lazy batch too; nil (no
	// error) in a check of sizes only, which makes no values.
	Shared(t Tensor, rows, cols int) ([]float32, error)
	// First is the first draw of generator version 1's stream of (seed,
	// tensor, key), whatever the case's version (log-prob target ids).
	First(tensor, key uint64) uint64
	// Positive refuses a dimension v < 1 called name; Budget refuses
	// counts of input values (spec.SatMul products) whose sum exceeds
	// spec.MaxElements.
	Positive(name string, v int) error
	Budget(counts ...int) error
}

// FirstErr returns the first non-nil error of errs.
func FirstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// TokenRows is the per-item tensor t of a token op's batch made with s,
// cols values an item: the first non-nil error of s.Positive("rows",
// s.Items()) and checks (the op's other shape and budget checks, in
// order), else s.PerItem(t, s.Items(), cols, s.Item).
func TokenRows(s Seeded, t Tensor, cols int, checks ...error) ([]float32, error) {
	if err := FirstErr(append([]error{s.Positive("rows", s.Items())}, checks...)...); err != nil {
		return nil, err
	}
	return s.PerItem(t, s.Items(), cols, s.Item)
}
