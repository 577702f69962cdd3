// Package relate holds the relations bitparity checks and the compare of
// their runs: what must hold between runs of one or two targets on the
// batches built from a case.
//
//   - relation.go: Relation, All, ByName, and Check, which runs a case's
//     relation on its targets (lazy batches when every target generates
//     them) and completes its finding; execute and differ, the run of one
//     batch and the compare of two runs on the rows they share.
//   - relations.go: batch invariance, padding, oracle parity, path parity,
//     log-prob parity and determinism; crossdevice.go the cross_device
//     relation; reference.go oracle parity against a device reference
//     (DeviceReference) with the CPU oracle on a sample.
//   - compare.go: the compare of every shared row, on the device when both
//     outputs live there, and a finding's row summaries.
//   - pairs.go, table.go: which relation runs on which target(s) (Pairs,
//     PairsNaming) and the tables bitparity list prints.
//
// A composite op's cases are not a relation's: fuzz.Check hands them to
// their fuzz.Source.
package relate
