// Package fuzz is bitparity's engine.
//
//   - inputs.go, explicit.go, items.go: a case becomes a batch (every value
//     derived from (seed, tensor, row), or explicit bits), and batches are
//     built from the case's items by copy: alone, at another position,
//     permuted, padded with filler.
//   - target.go: the Target interface and registry; targets_cpu.go the
//     oracle targets (fixed schedules, invariant by construction) and
//     OracleFor; driftmodels.go the CPU drift models, the negative controls.
//   - relation.go, relations.go: Check and the relations (batch invariance,
//     padding, oracle parity, path parity, log-prob parity, determinism);
//     compare.go compares every shared row, on the device when both outputs
//     live there.
//   - pairs.go: which relation runs on which target(s); campaign.go runs
//     them for a duration with cases from fuzz/gen, and minimize.go and
//     mapping.go shrink each finding (fuzz/shrink) and map the dimension
//     that decides it (fuzz/driftmap).
//   - boundary_inputs.go: cases with dist "boundary" get values the oracle
//     nudges onto output rounding midpoints (fuzz/boundary).
//   - shard.go: --shard i/n splits each pair's case stream (draw k goes to
//     shard k mod n) and MergeResults joins the shards' results;
//     crossdevice.go the cross_device relation (same kernel, every GPU).
//   - checkers.go: composite ops (fuzz/transformer) register their own
//     check, so Check, repro and corpus replay run them too.
package fuzz
