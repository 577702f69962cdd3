// Package ops is where an op lives as one package: the interface an op
// package implements (Op), its batches (Input, Rows), its outputs (Output:
// rows of bytes of the element types the op declares, compared bitwise)
// and its targets (Target), and the two relations every op is checked by
// (BatchInvariance, NeighbourReplacement).
//
// An op package (ops/moeroute, ops/quantfp8) holds everything the op is:
// its record, its reference loop with its policy type, its inputs from a
// seed and from explicit data, its CPU targets (the oracle and its drift
// models) and the words that say how two of its rows differ. The literal
// list in ops/all registers the op packages; nothing else switches on an
// op.
//
// Every seeded input row is a pure function of (seed, tensor, row key,
// column), as in package values: a row's bits never depend on the batch
// it sits in, so a relation builds its batches from keys.
package ops
