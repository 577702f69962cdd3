package ops

import (
	"context"
	"fmt"
)

// PolicyTarget is a target that runs on the CPU in this process: Compute
// runs its op on a batch at the policy At gives for the batch's number of
// items (a drift model changes policy at its onset), and it declares
// Declares.
type PolicyTarget[P fmt.Stringer] struct {
	Of       Op     // the op it runs
	Called   string // its name
	About    string // which kernel behaviour it reproduces (Models)
	Declares P
	Claims   bool // Invariant: the oracle, not a drift model
	At       func(items int) P
	Compute  func(in Input, at func(items int) P) (*Output, error)
}

func (t *PolicyTarget[P]) Name() string     { return t.Called }
func (t *PolicyTarget[P]) Op() Op           { return t.Of }
func (t *PolicyTarget[P]) Declared() string { return t.Declares.String() }
func (t *PolicyTarget[P]) Models() string   { return t.About }
func (t *PolicyTarget[P]) Invariant() bool  { return t.Claims }

// Run checks ctx, then computes every row of in.
func (t *PolicyTarget[P]) Run(ctx context.Context, in Input) (*Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return t.Compute(in, t.At)
}
