// Package inputs makes the batch of a case: every input value derived
// from (seed, tensor, item) by the case's generator version, or taken
// from the case's explicit data, and the batches a relation builds from
// a case's items by copy.
//
//   - inputs.go: Of, the batch of a case (values for generator version 2,
//     fillRow for 1); Budget, the memory budget of a case's input values.
//   - tokens.go, attention.go, explicit.go: the seeded tensors of the
//     token ops and of attention, and a case's explicit tensors.
//   - boundary.go: cases with dist "boundary" get values the oracle
//     nudges onto output rounding midpoints (package boundary).
//   - sensitive*.go: cases with dist "sensitive", whose rows the CPU
//     oracle picks where a schedule change shows (power.Family).
//   - lazy.go: Lazy, a batch whose per-item values the targets make on
//     their device (target.Generator), with the bits Of gives.
//   - items.go: batches from a case's items: Gather, View, Items,
//     FirstItems, Pad and PadCase (filler items), Permutation.
package inputs
