package main

import "github.com/bitparity/bitparity/spec"

// version is what `bitparity version` prints: spec.BuildVersion, the
// version every fingerprint records (set at link time with -ldflags "-X
// github.com/bitparity/bitparity/spec.Version=...").
func version() string { return spec.BuildVersion() }
