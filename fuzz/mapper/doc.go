// Package mapper maps the drift of a finding: the dimension that decides
// it (items, position, pad, kv, rows, ...), swept with fuzz/driftmap over
// the one rule of values to sweep, on the finding's own data and on
// random draws of the same shape, so a map says what decides the drift,
// not what one draw shows.
//
//   - mapdraws.go: Map, every dimension the finding's relation varies,
//     each swept on its own data and mapDraws random draws (a panel of
//     items for sensitive cases), the first that splits first.
//   - mapping.go: the sweeps of a finding (Sweep, SweepFor): what each
//     dimension builds and how a value is classified (output and tap bits,
//     the targets' agreement, a crash); sweepValues, the values swept.
//   - locate.go: when no dimension splits, the prefixes of the finding's
//     batch, swept as a scan does, locate the onset.
//
// Minimize (package fuzz) calls Map after shrinking; explain and corpus
// call it for a stored finding.
package mapper
