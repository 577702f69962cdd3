// Package gogc holds the garbage collector's target of a campaign, which
// the command sets and the campaign benchmarks measure under.
package gogc

// Campaign is the garbage collector's target (GOGC) that
// `bitparity run` sets for a campaign unless the environment sets one, and
// that the GPU check benchmarks measure under: a campaign allocates every
// case's batches and outputs and keeps little, so the default 100 spends
// its CPUs collecting, and the collector's assists fall on whoever
// allocates, the device queue's drainer included. On two cores the CPU
// campaign (`bitparity run --duration 20s --seed 1 --no-shrink`) checked
// 963-990 cases/s against 677-804 at 100, peak RSS 188 MB against 110 MB;
// on the H200 the RMSNorm check rate went from 2,069-2,780 to 3,131-4,218
// checks/s (docs/performance.md).
const Campaign = 400
