package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
)

// version is what `bitparity version` prints: spec.BuildVersion, the
// version every fingerprint records (set at link time with -ldflags "-X
// github.com/bitparity/bitparity/spec.Version=...").
func version() string { return spec.BuildVersion() }

// writeVersion prints the version, then which image of each GPU kernel
// module the default device loaded (gpu.ModuleImage: a fat image's machine
// code, or PTX the driver compiled), or why no GPU kernels are loaded.
func writeVersion(w io.Writer) error {
	if _, err := fmt.Fprintln(w, version()); err != nil {
		return err
	}
	dev, images, err := gpu.LoadedImages()
	switch {
	case errors.Is(err, gpu.ErrNoCUDA):
		_, err = fmt.Fprintln(w, "gpu kernels: none (built without the cuda tag)")
		return err
	case err != nil:
		_, err = fmt.Fprintf(w, "gpu kernels: none loaded: %v\n", err)
		return err
	}
	if _, err := fmt.Fprintf(w, "gpu kernels on %s:\n", dev); err != nil {
		return err
	}
	for _, im := range images {
		if _, err := fmt.Fprintf(w, "  %s\n", im); err != nil {
			return err
		}
	}
	return nil
}
