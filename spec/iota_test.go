package spec

import (
	"slices"
	"testing"
)

func TestIota(t *testing.T) {
	for n := range 4 {
		ids := Iota(n)
		if len(ids) != n || !IsIota(ids) {
			t.Errorf("Iota(%d) = %v", n, ids)
		}
	}
	for _, ids := range [][]int{{1}, {0, 2}, {0, 1, 1}, {1, 0}} {
		if IsIota(ids) {
			t.Errorf("IsIota(%v) = true", ids)
		}
	}
	if ids := Iota(3); !slices.Equal(ids, []int{0, 1, 2}) {
		t.Errorf("Iota(3) = %v", ids)
	}
}
