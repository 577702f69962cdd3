package attention

import "github.com/bitparity/bitparity/spec"

// ScanDims is a prefill's neighbour, chunk and prefix dimensions.
func (Prefill) ScanDims() []string {
	return []string{spec.ScanNeighbour, spec.ScanChunk, spec.ScanPrefix}
}

// ScanDims is a decode's kv, neighbour and page dimensions.
func (Decode) ScanDims() []string { return []string{spec.ScanKV, spec.ScanNeighbour, spec.ScanPage} }

// SensitiveWork is 0: a prefill has no sensitive draw.
func (Prefill) SensitiveWork(spec.Shape) int { return 0 }

// SensitiveWork is heads x kv x head_dim (kv at least 1): the decode
// draw costs about 4 x heads x (family + 1) single-row decodes a request
// (docs/detection.md).
func (Decode) SensitiveWork(s spec.Shape) int { return s.Heads * max(s.KV, 1) * s.HeadDim }
