package attention

import "github.com/bitparity/bitparity/spec"

// ScanDims is a prefill's neighbour, chunk and prefix dimensions.
func (Prefill) ScanDims() []string {
	return []string{spec.ScanNeighbour, spec.ScanChunk, spec.ScanPrefix}
}

// ScanDims is a decode's kv, neighbour and page dimensions.
func (Decode) ScanDims() []string { return []string{spec.ScanKV, spec.ScanNeighbour, spec.ScanPage} }

// SensitiveWork is heads x head_dim x seq_len·(seq_len+1)/2, a
// sequence's rows' KV lengths x head dim summed: the prefill draw tunes
// every query position's row and checks it against the family at its own
// KV length, about 30 + 9 x (groups of the family) single-row passes of
// KV length x head dim a row (fuzz/sensitive_prefill.go,
// docs/detection.md).
func (Prefill) SensitiveWork(s spec.Shape) int {
	return s.Heads * s.HeadDim * s.SeqLen * (s.SeqLen + 1) / 2
}

// SensitiveWork is heads x kv x head_dim (kv at least 1): the decode
// draw costs about 4 x heads x (family + 1) single-row decodes a request
// (docs/detection.md).
func (Decode) SensitiveWork(s spec.Shape) int { return s.Heads * max(s.KV, 1) * s.HeadDim }
