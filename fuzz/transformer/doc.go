// Package transformer is bitparity's end-to-end composite: a small
// decoder-only transformer built from the oracle's ops, run through a
// packed train path and a KV-cached inference path over the same requests,
// whose token log-probs must agree bit for bit in the declared training
// dtype. When they do not, a finding names the first layer and op where a
// token diverged (its Site) with that op's drift map.
//
// Source is the transformer as a composite source of the one campaign
// engine (fuzz.Source): fuzz.Campaign runs its jobs (invariant paths, a
// drift model planted at a random site, the two harness misuses),
// fuzz.Check checks its cases and fuzz.Minimize shrinks its findings with
// its steps. The rest of this package is what the model route
// (fuzz/external), the GPU backend (gpu, RegisterBackend) and their tests
// need; the model, the paths, the kernels and localisation live in
// internal/e2e. docs/transformer.md describes the case encoding.
package transformer
