package spec

// Iota is the index list 0, 1, ..., n-1: every item (or row) of a
// batch, in order.
func Iota(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return ids
}

// IsIota reports whether ids is 0, 1, ..., len(ids)-1 (an empty list
// is).
func IsIota(ids []int) bool {
	for i, id := range ids {
		if id != i {
			return false
		}
	}
	return true
}
