package gpu

import (
	"errors"
	"fmt"
	"io"
)

// WriteImages writes which image of each GPU kernel module the default
// device loaded (LoadedImages: a fat image's machine code, or PTX the
// driver compiled), one a line under the device's name, or a line saying
// why no GPU kernels are loaded (a build without cuda, no device).
func WriteImages(w io.Writer) error {
	dev, images, err := LoadedImages()
	switch {
	case errors.Is(err, ErrNoCUDA):
		_, err = fmt.Fprintln(w, "gpu kernels: none (built without the cuda tag)")
		return err
	case err != nil:
		_, err = fmt.Fprintf(w, "gpu kernels: none loaded: %v\n", err)
		return err
	}
	fmt.Fprintf(w, "gpu kernels on %s:\n", dev)
	for _, im := range images {
		if _, err := fmt.Fprintf(w, "  %s\n", im); err != nil {
			return err
		}
	}
	return nil
}
