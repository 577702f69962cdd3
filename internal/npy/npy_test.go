package npy

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestHeader(t *testing.T) {
	for _, shape := range [][]int{{3}, {2, 5}, {1, 4, 32, 128}, {0}} {
		h := Header(shape)
		if !bytes.HasPrefix(h, []byte("\x93NUMPY\x01\x00")) {
			t.Fatalf("shape %v: magic %q", shape, h[:8])
		}
		if len(h)%64 != 0 || h[len(h)-1] != '\n' {
			t.Fatalf("shape %v: header of %d bytes ending %q, want a multiple of 64 ending in a newline", shape, len(h), h[len(h)-1])
		}
		if n := int(binary.LittleEndian.Uint16(h[8:])); n != len(h)-10 {
			t.Fatalf("shape %v: header length field %d, want %d", shape, n, len(h)-10)
		}
	}
	if got := string(Header([]int{3})); !strings.Contains(got, "'shape': (3,)") {
		t.Fatalf("one-dimensional shape written as %q, want a one-tuple", got)
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.npy")
	data := []float32{1, -0, float32(math.Inf(1)), 0.1, -3.5, float32(math.NaN())}
	if err := Write(p, []int{2, 3}, data); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	h := Header([]int{2, 3})
	if !bytes.Equal(b[:len(h)], h) || len(b) != len(h)+4*len(data) {
		t.Fatalf("file of %d bytes, want the header (%d) and %d values", len(b), len(h), len(data))
	}
	for i, v := range data {
		if got := binary.LittleEndian.Uint32(b[len(h)+4*i:]); got != math.Float32bits(v) {
			t.Fatalf("value %d: bits %#x, want %#x", i, got, math.Float32bits(v))
		}
	}
	if err := Write(filepath.Join(dir, "bad.npy"), []int{4}, data); err == nil {
		t.Fatal("6 values for shape [4]: no error")
	}
	// numpy reads it back, where it is installed
	py, err := exec.LookPath("python3")
	if err != nil {
		return
	}
	out, err := exec.Command(py, "-c", "import sys, numpy as np; a = np.load(sys.argv[1]); print(a.shape, a.dtype, a[0, 2], a[1, 1])", p).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "No module named 'numpy'") {
			t.Logf("numpy not installed here: %s", bytes.TrimSpace(out))
			return
		}
		t.Fatalf("numpy.load: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "(2, 3) float32 inf -3.5" {
		t.Fatalf("numpy read %q", got)
	}
}
