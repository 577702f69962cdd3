//go:build !cuda

package gpu

import (
	"bytes"
	"testing"
)

// TestWriteImagesNoCUDA: a build without cuda says it loaded no kernels
// and why.
func TestWriteImagesNoCUDA(t *testing.T) {
	var b bytes.Buffer
	if err := WriteImages(&b); err != nil || b.String() != "gpu kernels: none (built without the cuda tag)\n" {
		t.Errorf("WriteImages = %q, %v", b.String(), err)
	}
}
