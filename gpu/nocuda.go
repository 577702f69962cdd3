//go:build !cuda

package gpu

import "github.com/bitparity/bitparity/spec"

// CUDABuild says whether this build has the cuda build tag (GPU targets,
// user kernels). It does not.
const CUDABuild = false

// Available reports whether this build can run GPU targets. Without the
// cuda build tag it always returns ErrNoCUDA.
func Available() error { return ErrNoCUDA }

// LoadedImages reports which kernel images the default device loaded.
// Without the cuda build tag it returns ErrNoCUDA.
func LoadedImages() (string, []ModuleImage, error) { return "", nil, ErrNoCUDA }

// deviceFingerprint reports that this build has no device fields to fill.
func deviceFingerprint(*spec.Env) bool { return false }
