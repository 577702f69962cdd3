//go:build !cuda

package gpu

import "github.com/bitparity/bitparity/target"

// NewUserKernel makes the target of a user kernel. Without the cuda build
// tag it fails with ErrNoCUDA (the manifest itself is checked by
// LoadManifest in any build).
func NewUserKernel(m *Manifest) (target.Target, error) { return nil, ErrNoCUDA }
