// Package e2e is the inside of fuzz/transformer, bitparity's end-to-end
// composite: a small decoder-only transformer built from the oracle's ops,
// run through two paths over the same requests, whose token log-probs must
// agree bit for bit in the declared training dtype.
//
//   - The train path (train.go) packs every sequence into one batch: the
//     GEMMs, RMSNorms and the log-prob see all tokens of all sequences as
//     rows; attention is a causal prefill over each whole sequence.
//   - The inference path (infer.go) prefills each prompt when its request
//     joins, then decodes one token at a time against a KV cache, the batch
//     of live requests padded with filler rows to a CUDA-graph size (a
//     multiple of 64); requests join and leave between steps.
//
// Both use teacher forcing: the response tokens are given, so both paths see
// the same tokens. Every op call asks a Kernels value for its schedule,
// passing the call's layer, op, path, phase and row count, so a drift model
// (a schedule chosen by a policy of the batch) can be planted into any one
// layer's op (kernels.go). Check (check.go) is the relation; when the paths
// differ it re-runs both with taps on every op's output and names the first
// layer and op where a row diverged, with that op's drift map
// (localize.go), and sets the finding's Site to that layer and op;
// PlantedSite is the site a case plants its drift at, and ShrinkSteps
// (shrink.go) the smaller cases fuzz.Minimize tries. Case encoding in
// spec.Case is in case.go and docs/transformer.md.
package e2e
