package spec

// Relation names: what must hold between runs (docs/architecture.md, words).
const (
	// RelBatchInvariance: row r computed alone, in a batch of Rel.Batch
	// rows at Rel.Position, and in a permuted batch (Rel.PermSeed) gives
	// the same bits.
	RelBatchInvariance = "batch_invariance"
	// RelPadding: the batch padded to Rel.Pad rows of Rel.Filler filler
	// gives the same bits on the real rows.
	RelPadding = "padding"
	// RelOracleParity: target == oracle with the target's declared schedule
	// (bitwise), or within the target's declared ulp bound.
	RelOracleParity = "oracle_parity"
	// RelPathParity: two targets that must agree (prefill vs decode, tile
	// 48 vs 64, train vs inference path) give the same bits.
	RelPathParity = "path_parity"
	// RelLogProbParity: log-probs of two paths equal bitwise in the
	// declared dtype (Case.Compare) on the declared positions (Rel.Mask).
	RelLogProbParity = "logprob_parity"
	// RelDeterminism: the same call twice gives the same bits.
	RelDeterminism = "determinism"
	// RelCrossDevice: the same target on the same batch gives the same bits
	// on every GPU of the host (with one GPU: determinism).
	RelCrossDevice = "cross_device"
)

// Relations lists every relation in a stable order.
var Relations = []string{RelBatchInvariance, RelPadding, RelOracleParity,
	RelPathParity, RelLogProbParity, RelDeterminism, RelCrossDevice}
