package main

import (
	"fmt"
	"io"

	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
)

// writeVersion prints spec.BuildVersion, the version every fingerprint
// records (set at link time with -ldflags "-X
// github.com/bitparity/bitparity/spec.Version=..."), then which image of
// each GPU kernel module the default device loaded, or why none is
// (gpu.WriteImages).
func writeVersion(w io.Writer) error {
	if _, err := fmt.Fprintln(w, spec.BuildVersion()); err != nil {
		return err
	}
	return gpu.WriteImages(w)
}
