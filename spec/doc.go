// Package spec is bitparity's shared vocabulary: the plain data types that
// cross package boundaries and files. A Case says what to run, a Finding says
// what broke, a Result is what one campaign wrote. The case file format
// (corpus) and the JSON report (reports) are built from these types, so
// every field here is part of a versioned contract: add fields, never change
// the meaning of one.
//
// Two decisions are made here once and read everywhere else: what an op is
// (its OpInfo in the op table, ops.go: batch dimension, dimensions read,
// element and work counts, compared columns, taps, fillers) and what a
// valid case is (Case.Validate, validate.go, with the limits of limits.go
// and one saturating arithmetic, SatMul and SatAdd).
//
// spec imports nothing of bitparity; fuzz, corpus, reports, gpu and cmd all
// import it.
package spec
