//go:build !cuda

package gpu

import "github.com/bitparity/bitparity/spec"

// Available reports whether this build can run GPU targets. Without the
// cuda build tag it always returns ErrNoCUDA.
func Available() error { return ErrNoCUDA }

// deviceFingerprint reports that this build has no device fields to fill.
func deviceFingerprint(*spec.Env) bool { return false }
