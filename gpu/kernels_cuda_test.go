//go:build cuda

package gpu

import (
	"fmt"
	"strings"
	"testing"
)

// TestFatbinLoaded: in a build with fat images every module loads its fat
// image, with the code pickCode gives for the GPU (SASS sm_90 on the H200,
// so no JIT compile), and LoadedImages says so; a build without usable fat
// images loads the PTX and says why.
func TestFatbinLoaded(t *testing.T) {
	dev, images, err := LoadedImages()
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	if len(images) != len(Modules) {
		t.Fatalf("%d images for %d modules", len(images), len(Modules))
	}
	set := fatbins()
	for i, im := range images {
		t.Logf("%s: %s", dev, im)
		if im.Module != Modules[i] {
			t.Errorf("image %d is module %s, want %s", i, im.Module, Modules[i])
		}
		if set.note != "" {
			if im.Fatbin || !strings.Contains(im.Note, set.note) {
				t.Errorf("%s: no usable fat images (%s), but %+v", im.Module, set.note, im)
			}
			continue
		}
		var major, minor int
		d, _ := Default()
		if _, err := fmt.Sscanf(d.ComputeCapability(), "%d.%d", &major, &minor); err != nil {
			t.Fatal(err)
		}
		sass := pickCode(set.codes, major, minor)
		if !im.Fatbin || im.Code != sass {
			t.Errorf("%s: loaded %+v, want the fat image's %s", im.Module, im, sass)
		}
	}
}
