package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/bitparity/bitparity/gpu"
)

// Version is set at build time with -ldflags "-X main.Version=..."; when
// empty the module's build info is used.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
		if bi.Main.Version != "" {
			return bi.Main.Version
		}
	}
	return "dev"
}

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
