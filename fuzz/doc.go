// Package fuzz is bitparity's engine; the vocabulary it runs (targets,
// batches, outputs, the oracle targets and drift models) is package target.
//
// Its parts below it, imported one way (fuzz -> fuzz/mapper ->
// fuzz/relate -> fuzz/inputs):
//
//   - fuzz/inputs: a case becomes a batch (every value derived from
//     (seed, tensor, item), or explicit bits), and batches are built
//     from the case's items by copy: alone, at another position,
//     permuted, padded.
//   - fuzz/relate: the relations (batch invariance, padding, oracle
//     parity, path parity, log-prob parity, determinism, cross-device),
//     relate.Check of a single-op case and the compare of every shared
//     row, on the device when both outputs live there; which relation
//     runs on which target(s) (relate.Pairs).
//   - fuzz/mapper: the drift map of a finding (mapper.Map): the dimension
//     that decides it, swept with fuzz/driftmap on the finding's own data
//     and random draws.
//
// This package:
//
//   - minimize.go: Minimize, which shrinks a finding (fuzz/shrink) and
//     maps its drift (fuzz/mapper).
//   - campaign.go: the campaign's options and pairs; runner.go the loop
//     that runs them; draw.go a pair's stream of cases, each bounded by
//     the cost model (fuzz/internal/casecost), a share of them followed by
//     residue cases (gen.Residue: every class mod m <= 128 of every batch
//     dimension).
//   - reshape.go: a campaign at a model profile (Reshape, MaxTokens): the
//     model's inner sizes and dtypes, batches over 1..max_tokens
//     (gen.Spread), bounded by the work the CPU must do (cpuBound).
//   - shard.go: --shard i/n (spec.Shard) splits each pair's case stream
//     (draw k goes to shard k mod n) and MergeResults joins the shards'
//     results.
//   - source.go: Check, which hands a case of a composite op to its
//     Source and any other to relate.Check; composite ops
//     (fuzz/transformer, a model route of fuzz/external) are Source
//     values a caller passes to Check, Minimize
//     and Campaign.Sources (their jobs, check, shrink steps and map), and
//     Expected is the one rule for their controls' findings; share.go:
//     a source's time share (Source.Share), which the campaign's one
//     scheduler keeps.
package fuzz
