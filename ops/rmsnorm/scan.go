package rmsnorm

import "github.com/bitparity/bitparity/spec"

// ScanDims is none: a token op's scans sweep items, pad and position.
func (Op) ScanDims() []string { return nil }

// SensitiveWork is 0: a row's sensitive draw is cheap.
func (Op) SensitiveWork(spec.Shape) int { return 0 }
