package ops

import (
	"errors"
	"fmt"
	"testing"
)

// itemsOnly is a Seeded of n items whose PerItem records its call.
type itemsOnly struct {
	Seeded
	n    int
	call string
}

func (s *itemsOnly) Items() int        { return s.n }
func (s *itemsOnly) Item(i int) uint64 { return uint64(10 + i) }
func (s *itemsOnly) Positive(name string, v int) error {
	if v < 1 {
		return fmt.Errorf("%s = %d", name, v)
	}
	return nil
}

func (s *itemsOnly) PerItem(t Tensor, rows, cols int, key func(int) uint64) ([]float32, error) {
	s.call = fmt.Sprintf("tensor %d rows %d cols %d first key %d", t.ID, rows, cols, key(0))
	return make([]float32, rows*cols), nil
}

// TestTokenRows: the batch's rows are checked first, then the op's checks
// in order; only then are the rows made, one per item, keyed by Item.
func TestTokenRows(t *testing.T) {
	bad, worse := errors.New("bad"), errors.New("worse")
	empty := &itemsOnly{n: 0}
	if _, err := TokenRows(empty, Tensor{ID: 1}, 4, bad); err == nil || err.Error() != "rows = 0" || empty.call != "" {
		t.Errorf("no items: %v (PerItem %q), want rows = 0 and no rows made", err, empty.call)
	}
	s := &itemsOnly{n: 3}
	if _, err := TokenRows(s, Tensor{ID: 1}, 4, nil, bad, worse); !errors.Is(err, bad) || s.call != "" {
		t.Errorf("a failed check: %v (PerItem %q), want the first failed check and no rows made", err, s.call)
	}
	x, err := TokenRows(s, Tensor{ID: 1}, 4, nil)
	if want := "tensor 1 rows 3 cols 4 first key 10"; err != nil || len(x) != 12 || s.call != want {
		t.Errorf("TokenRows: %d values, %v, PerItem %q; want 12 values from %q", len(x), err, s.call, want)
	}
}
