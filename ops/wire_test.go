package ops

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// fakeWire holds float tensors by name and records what was read.
type fakeWire struct {
	floats map[string][]float32
	read   []string
}

func (w *fakeWire) Floats(name string, dims int) ([]float32, []int, error) {
	w.read = append(w.read, name)
	v, ok := w.floats[name]
	if !ok {
		return nil, nil, fmt.Errorf("no tensor %q", name)
	}
	return v, []int{len(v)}, nil
}

func (w *fakeWire) Ints(name string) ([]int64, error) {
	w.read = append(w.read, name)
	return []int64{1}, nil
}

func (w *fakeWire) Eps() (float32, error) {
	w.read = append(w.read, "eps")
	return 0.5, nil
}

func (w *fakeWire) Bad(field, format string, a ...any) error { return errors.New(field) }

// TestWireReader: the reads run in order until one fails; the later ones
// read nothing and return nothing, and Err is the first error.
func TestWireReader(t *testing.T) {
	w := &fakeWire{floats: map[string][]float32{"x": {1, 2}}}
	r := ReadWire(w)
	x, xs := r.Floats("x", 1)
	if r.Err() != nil || !slices.Equal(x, []float32{1, 2}) || !slices.Equal(xs, []int{2}) {
		t.Fatalf("x: %v %v, err %v", x, xs, r.Err())
	}
	if eps := r.Eps(); eps != 0.5 {
		t.Errorf("eps %v, want 0.5", eps)
	}
	missing, _ := r.Floats("w", 1)
	ids := r.Ints("targets")
	eps := r.Eps()
	if missing != nil || ids != nil || eps != 0 {
		t.Errorf("reads after an error gave %v %v %v, want nothing", missing, ids, eps)
	}
	if err := r.Err(); err == nil || err.Error() != `no tensor "w"` {
		t.Errorf("Err %v, want the first error", err)
	}
	if want := []string{"x", "eps", "w"}; !slices.Equal(w.read, want) {
		t.Errorf("read %v, want %v", w.read, want)
	}
}
