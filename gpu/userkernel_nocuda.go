//go:build !cuda

package gpu

import "github.com/bitparity/bitparity/fuzz"

// NewUserKernel makes the target of a user kernel. Without the cuda build
// tag it fails with ErrNoCUDA (the manifest itself is checked by
// LoadManifest in any build).
func NewUserKernel(m *Manifest) (fuzz.Target, error) { return nil, ErrNoCUDA }
